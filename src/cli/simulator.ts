/**
 * `cod simulator`: the FreeSWITCH simulator as a process of its own (src/sim/run.ts, the same
 * program as `node dist/sim/main.js`): the sandbox an application developer runs beside a
 * daemon in `freeswitch` mode (docs/simulator.md "The sandbox"). This file only renames the
 * program in its messages and maps its exit codes onto cod's.
 */
import { parseSimulatorArgs, runSimulator, SIMULATOR_USAGE } from '../sim/run.js'
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, type CliIo, type ExitCode } from './io.js'

const renamed = (s: string): string => s.replaceAll('node dist/sim/main.js', 'cod simulator')

const SIMULATOR_HELP = `${renamed(SIMULATOR_USAGE)}
The sandbox: run the daemon with the same file in freeswitch mode (cod start), and this beside it;
the simulator plays each domain's sim settings and fetches the daemon's xml_curl documents.

Exit: 0 after a stop (SIGTERM, SIGINT, fsctl shutdown); 1 a configuration refused or a port
taken; 2 a wrong command line.
`

export async function runSimulatorCommand(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseSimulatorArgs(argv)
  if (!parsed.ok) {
    io.stderr.write(`${parsed.error}\n\n${SIMULATOR_HELP}`)
    return EXIT_USAGE
  }
  if (parsed.value === 'help') {
    io.stdout.write(SIMULATOR_HELP)
    return EXIT_OK
  }
  const code = await runSimulator(argv, {
    stdout: { write: (s: string) => io.stdout.write(renamed(s)) },
    stderr: { write: (s: string) => io.stderr.write(renamed(s)) },
    once: (signal, listener) => process.once(signal, listener),
    on: (signal, listener) => process.on(signal, listener),
  })
  // The command line was checked above: its 2 can only be a refused configuration or a port.
  return code === 0 ? EXIT_OK : EXIT_PROBLEMS
}
