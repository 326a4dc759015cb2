/** Structured JSON logs (pino): one place decides the format so every part logs alike. */
import { pino, type Logger, type LevelWithSilent } from 'pino'

export type { Logger }

/** How the daemon's own log lines reach stdout (`log.flush_ms`). */
export interface LogOutput {
  /**
   * The longest a line waits in memory before it is written (ms); 0 writes every line at once.
   * Lines also go out once 4 KiB are waiting, and at exit (pino flushes its destination on
   * `exit`); a SIGKILL loses at most this long's lines. Why buffer: a line written at once is
   * one write of its own, done on libuv's thread pool (a hand-off there and back per line); a
   * call_user logs two lines, and those hand-offs were 6 % of the daemon's CPU in the api
   * benchmark's profile (docs/bench.md). The journal, not the log, is what keeps results.
   */
  readonly flushMs: number
}

/** The bytes that are written together once waiting (well under sonic-boom's 16 KiB maxWrite). */
const BUFFER_BYTES = 4096

const stdoutDestination = (o: LogOutput) =>
  o.flushMs > 0
    ? pino.destination({ fd: 1, sync: false, minLength: BUFFER_BYTES, periodicFlush: o.flushMs })
    : pino.destination({ fd: 1, sync: false })

export const createLogger = (level: LevelWithSilent, destination?: NodeJS.WritableStream): Logger =>
  destination === undefined ? pino({ level, base: { svc: 'cod' } }) : pino({ level, base: { svc: 'cod' } }, destination)

/** The daemon's logger: JSON lines on stdout, written as `output` says. */
export const createStdoutLogger = (level: LevelWithSilent, output: LogOutput): Logger => pino({ level, base: { svc: 'cod' } }, stdoutDestination(output))

/** A logger that writes nothing: tests that do not assert on logs. */
export const silentLogger = (): Logger => pino({ level: 'silent' })
