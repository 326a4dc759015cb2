/**
 * `cod start`: the daemon as operators run it (what `npm start` and src/main.ts run, so there is
 * one path from the command line to startDaemon). Starts the daemon and turns signals into
 * reload (SIGHUP) and graceful stop (SIGTERM, SIGINT); resolves the exit code once it stopped.
 */
import { startDaemon } from '../daemon.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, stringOpt, type CliIo, type ExitCode } from './io.js'

export const START_USAGE = `usage: cod start [--config conf/daemon.yaml]

Starts the daemon on the configuration file (and the domain files of its \`directory\`). Logs
are JSON lines on stdout. SIGHUP reloads the configuration (a bad file keeps the running one);
SIGTERM or SIGINT stop it gracefully (no new requests; pending callbacks delivered for up to
10 s, the rest kept in the journal).

  --config, -c   the daemon's file (default conf/daemon.yaml)

Exit: 0 after a graceful stop; 1 the daemon could not start (configuration refused, journal
folder in use, port taken: said on stderr) or failed to stop; 2 a wrong command line.
`

/** The signals a running daemon listens to (process, or a stand-in in tests). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown
  once(signal: NodeJS.Signals, listener: () => void): unknown
}

export async function runStart(argv: readonly string[], io: CliIo, signals: SignalSource = process): Promise<ExitCode> {
  const parsed = parseOrExit(io, START_USAGE, argv, { config: { type: 'string', short: 'c' } }, false)
  if (!parsed.ok) return parsed.error
  const configFile = stringOpt(parsed.value.values.config) ?? 'conf/daemon.yaml'
  let started: Awaited<ReturnType<typeof startDaemon>>
  try {
    started = await startDaemon({ configFile })
  } catch (e) {
    // A listen error (port taken, address not on this host) is thrown by the server.
    io.stderr.write(`daemon not started: ${(e as Error).message}\n`)
    return EXIT_PROBLEMS
  }
  if (!started.ok) {
    // A refused configuration (file: path: reason), a journal folder in use, a listener that cannot listen.
    io.stderr.write(`daemon not started:\n${started.error.map((p) => `  ${p}`).join('\n')}\n`)
    return EXIT_PROBLEMS
  }
  const daemon = started.value
  signals.on('SIGHUP', () => void daemon.reload())
  const signal = await new Promise<string>((resolve) => {
    signals.once('SIGTERM', () => resolve('SIGTERM'))
    signals.once('SIGINT', () => resolve('SIGINT'))
  })
  daemon.logger.info({ signal }, 'shutdown requested')
  try {
    await daemon.stop()
    return EXIT_OK
  } catch (e) {
    daemon.logger.error({ err: e }, 'shutdown failed')
    return EXIT_PROBLEMS
  }
}
