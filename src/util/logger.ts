/** Structured JSON logs (pino): one place decides the format so every part logs alike. */
import { pino, type Logger, type LevelWithSilent } from 'pino'
import { StdoutLines } from './stdout-lines.js'

export type { Logger }

/** How the daemon's own log lines reach stdout (`log.flush_ms`). */
export interface LogOutput {
  /**
   * The longest a line waits in memory before it is written (ms); 0 writes every line at once.
   * Lines also go out once 4 KiB are waiting, and at exit; a SIGKILL loses at most this long's
   * lines (and a reader that stops reading loses some: stdout-lines.ts). Why buffer: a line
   * written at once is one write of its own (with sonic-boom, pino's own destination, also a
   * hand-off to libuv's thread pool and back); a call_user logs two lines, and those hand-offs
   * were 6 % of the daemon's CPU in the api benchmark's profile (docs/bench.md). The journal,
   * not the log, is what keeps results.
   */
  readonly flushMs: number
}

let stdioErrorsIgnored = false

/**
 * stdout as the daemon writes it (stdout-lines.ts): never blocking the daemon or its exit,
 * whatever the reader does. Asking Node for process.stdout puts a pipe's descriptor in
 * non-blocking mode (libuv opens it so), which is what lets a write to a full pipe return EAGAIN
 * instead of stopping the whole process; a file or a terminal are left as they are.
 *
 * What Node itself writes on process.stdout or process.stderr (a warning) fails with EPIPE once
 * their reader went away, and an unhandled 'error' of theirs is an uncaught exception: the
 * process would die at once, without its graceful stop (seen: a warning at SIGTERM with stderr
 * closed, exit 1 before "shutdown requested"). Such a write is dropped instead.
 */
const stdoutLines = (flushMs: number): StdoutLines => {
  if (!stdioErrorsIgnored) {
    stdioErrorsIgnored = true
    process.stdout.on('error', () => undefined)
    process.stderr.on('error', () => undefined)
  }
  return new StdoutLines({ fd: 1, flushMs })
}

/** stdout, each line at once: shared by every logger made without a destination. */
let plainStdout: StdoutLines | undefined

/** A logger on `destination`, or on stdout (each line at once) by default. */
export const createLogger = (level: LevelWithSilent, destination?: NodeJS.WritableStream): Logger =>
  pino({ level, base: { svc: 'cod' } }, destination ?? (plainStdout ??= stdoutLines(0)))

/** The daemon's logger: JSON lines on stdout, written as `output` says. */
export const createStdoutLogger = (level: LevelWithSilent, output: LogOutput): Logger => pino({ level, base: { svc: 'cod' } }, stdoutLines(output.flushMs))

/** A logger that writes nothing: tests that do not assert on logs. */
export const silentLogger = (): Logger => pino({ level: 'silent' })
