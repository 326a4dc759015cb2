/**
 * The `cod` command's table of subcommands and its dispatcher. Each subcommand lives in a module
 * of its own, loaded only when it runs, so `cod token hash` does not load the daemon. The exit
 * codes are io.ts's: 0 done, 1 problems found, 2 a wrong command line.
 */
import { EXIT_OK, usageError, type CliIo, type ExitCode } from './io.js'

interface Subcommand {
  readonly summary: string
  readonly run: (argv: readonly string[], io: CliIo) => Promise<ExitCode>
}

const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  start: { summary: 'run the daemon (what npm start runs)', run: async (a, io) => (await import('./start.js')).runStart(a, io) },
  'check-config': {
    summary: 'check a daemon.yaml and its domain files as the daemon would load them',
    run: async (a, io) => (await import('./check-config.js')).runCheckConfig(a, io),
  },
  ivr: { summary: 'ivr validate <file|->: check IVR documents with the daemon\'s parser', run: async (a, io) => (await import('./ivr-validate.js')).runIvr(a, io) },
  simulator: {
    summary: 'the FreeSWITCH simulator as its own process: the sandbox for application developers',
    run: async (a, io) => (await import('./simulator.js')).runSimulatorCommand(a, io),
  },
  token: { summary: 'token hash: print the sha256: form of an API token read on stdin', run: async (a, io) => (await import('./token-hash.js')).runToken(a, io) },
  results: { summary: 'results list|redeliver: the result journal\'s dead letters', run: async (a, io) => (await import('./results.js')).runResults(a, io) },
  call: { summary: 'a test call through a running daemon: the reply, then its events', run: async (a, io) => (await import('./call.js')).runCall(a, io) },
  healthcheck: {
    summary: 'ask a running daemon\'s /healthz where its file says it listens (the image\'s HEALTHCHECK)',
    run: async (a, io) => (await import('./healthcheck.js')).runHealthcheck(a, io),
  },
}

const COD_USAGE = `usage: cod <command> [options]     (cod <command> --help for each)

${Object.entries(SUBCOMMANDS)
  .map(([name, c]) => `  ${name.padEnd(14)}${c.summary}`)
  .join('\n')}

Exit codes (every command): 0 done; 1 problems found (a refused configuration or document, a
refused call...); 2 a wrong command line.
`

export async function runCod(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [name, ...rest] = argv
  if (name === undefined) return usageError(io, 'a command is expected', COD_USAGE)
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(COD_USAGE)
    return EXIT_OK
  }
  const sub = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined
  if (sub === undefined) return usageError(io, `unknown command "${name}"`, COD_USAGE)
  return sub.run(rest, io)
}
