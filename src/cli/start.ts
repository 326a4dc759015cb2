/**
 * `cod start`: the daemon as operators run it (what `npm start` and src/main.ts run, so there is
 * one path from the command line to startDaemon). Starts the daemon and turns signals into
 * reload (SIGHUP) and graceful stop (SIGTERM, SIGINT); resolves the exit code once it stopped.
 */
import { startDaemon } from '../daemon.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, stringOpt, type CliIo, type ExitCode } from './io.js'

const START_USAGE = `usage: cod start [--config conf/daemon.yaml]

Starts the daemon on the configuration file (and the domain files of its \`directory\`). Logs
are JSON lines on stdout. SIGHUP reloads the configuration (a bad file keeps the running one);
SIGTERM or SIGINT stop it gracefully (no new requests; pending callbacks delivered for up to
10 s, the rest kept in the journal), within 14 s whatever happens; a second SIGTERM or SIGINT
ends the stop at once. A stdout or stderr that nobody reads, or that was closed, never holds it.

  --config, -c   the daemon's file (default conf/daemon.yaml)

Exit: 0 after a graceful stop; 1 the daemon could not start (configuration refused, journal
folder in use, port taken: said on stderr), or its stop failed, passed 14 s or was cut short by
a second signal; 2 a wrong command line.
`

/**
 * The longest a graceful stop may take: the callbacks' 10 s (daemon.ts) and the rest of the
 * stop, well under the 30 s docs/deploy.md gives `docker stop` and deploy/systemd/cod.service
 * gives systemd (TimeoutStopSec), so the daemon ends its own stop before it is killed. Past it the
 * process exits anyway (1): a part that hangs must not leave a daemon that an init system, or a
 * shell's Ctrl-C, believes stopping forever. Cutting a stop short loses nothing: what was
 * accepted is in the journal already (docs/callbacks.md "Durability").
 */
const SHUTDOWN_DEADLINE_MS = 14_000

/** The signals a running daemon listens to (process, or a stand-in in tests). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown
  once(signal: NodeJS.Signals, listener: () => void): unknown
}

/** How a stop ended (stopWithin). */
export type StopOutcome = { kind: 'stopped' } | { kind: 'failed'; error: unknown } | { kind: 'deadline' } | { kind: 'signal'; signal: string }

/** Resolves with the first SIGTERM or SIGINT from now on. */
const nextStopSignal = (signals: SignalSource): Promise<string> =>
  new Promise((resolve) => {
    signals.once('SIGTERM', () => resolve('SIGTERM'))
    signals.once('SIGINT', () => resolve('SIGINT'))
  })

/** A promise resolved after `ms` that does not keep the process alive. */
const deadlineAfter = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref())

/**
 * `stop()`, bounded: whichever comes first of its end, `deadline`, or `cut` (a second signal).
 * The stop itself is not undone: the process exits and its sockets go with it.
 * @internal Exported for tests: test/cli checks the deadline and the second signal in-process.
 */
export function stopWithin(stop: () => Promise<void>, deadline: Promise<void>, cut: Promise<string>): Promise<StopOutcome> {
  return Promise.race([
    stop().then(
      (): StopOutcome => ({ kind: 'stopped' }),
      (error: unknown): StopOutcome => ({ kind: 'failed', error }),
    ),
    deadline.then((): StopOutcome => ({ kind: 'deadline' })),
    cut.then((signal): StopOutcome => ({ kind: 'signal', signal })),
  ])
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
  const signal = await nextStopSignal(signals)
  daemon.logger.info({ signal, deadline_ms: SHUTDOWN_DEADLINE_MS }, 'shutdown requested')
  const outcome = await stopWithin(() => daemon.stop(), deadlineAfter(SHUTDOWN_DEADLINE_MS), nextStopSignal(signals))
  switch (outcome.kind) {
    case 'stopped':
      return EXIT_OK
    case 'failed':
      daemon.logger.error({ err: outcome.error }, 'shutdown failed')
      return EXIT_PROBLEMS
    case 'deadline':
      daemon.logger.error({ deadline_ms: SHUTDOWN_DEADLINE_MS }, 'shutdown took longer than its deadline: exiting without finishing it')
      return EXIT_PROBLEMS
    case 'signal':
      daemon.logger.warn({ signal: outcome.signal }, 'second signal during the shutdown: exiting without finishing it')
      return EXIT_PROBLEMS
  }
}
