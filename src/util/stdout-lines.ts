/**
 * Where the daemon's log lines go: its stdout, written so that stdout can never hold the daemon,
 * nor its exit. Operators pipe `cod start` into tee, a log shipper, a terminal they may close:
 * that reader can stop reading (a full pipe) or go away (EPIPE) at any moment, a signal often
 * arriving at the same moment (Ctrl-C on `cod start | tee log`). sonic-boom (pino.destination)
 * retries such a write forever: on exit its flushSync sleeps 100 ms and tries again, in a loop
 * that only a SIGKILL ends; so the daemon writes its lines itself:
 *
 * - on the main thread, with a non-blocking write (a pipe is made non-blocking, see below): a
 *   write that cannot be done now (EAGAIN) waits in memory and is tried again later;
 * - at most MAX_WAITING_BYTES wait; lines beyond are dropped, and counted in a line written
 *   once stdout takes lines again;
 * - a stdout that is gone (EPIPE, EBADF...) takes nothing more: every line is dropped from then on;
 * - at exit, one last attempt: what cannot be written at once is lost, the exit is not delayed.
 *
 * Lines are written together once BATCH_BYTES wait or `flushMs` after the first one (0: each at
 * once): one write per batch keeps the syscalls down (logger.ts says why that matters).
 */
import { writeSync } from 'node:fs'

/** The bytes that are written together once waiting (one syscall per batch). */
const BATCH_BYTES = 4096
/**
 * The most that waits for a stdout that takes nothing (a full pipe); lines beyond are dropped.
 * @internal Exported for tests: test/util checks the bound on a full pipe.
 */
export const MAX_WAITING_BYTES = 1024 * 1024
/** How soon a write refused with EAGAIN (a full pipe) is tried again, when `flushMs` is 0. */
const RETRY_MS = 100

/** The part of node:fs this uses (tests give a stand-in: a stdout that is full, or gone). */
export type WriteSync = (fd: number, buffer: Buffer) => number

export interface StdoutLinesOptions {
  readonly fd: number
  /** The longest a line waits before it is written (ms); 0 writes every line at once. */
  readonly flushMs: number
  readonly write?: WriteSync
}

/** Every open destination, flushed once when the process exits (one hook for all of them). */
const open = new Set<StdoutLines>()
let exitHooked = false

export class StdoutLines {
  private readonly fd: number
  private readonly flushMs: number
  private readonly writeSync: WriteSync
  /** Bytes the last write left (a partial write, or a batch refused with EAGAIN): they go first. */
  private head: Buffer | undefined
  private waiting: string[] = []
  private waitingBytes = 0
  private dropped = 0
  private gone = false
  private timer: NodeJS.Timeout | undefined

  constructor(o: StdoutLinesOptions) {
    this.fd = o.fd
    this.flushMs = o.flushMs
    this.writeSync = o.write ?? writeSync
    open.add(this)
    if (!exitHooked) {
      exitHooked = true
      process.on('exit', () => {
        for (const d of open) d.flushNow()
      })
    }
  }

  /** pino's destination interface: one JSON line. */
  write(line: string): boolean {
    if (this.gone) return true
    const bytes = Buffer.byteLength(line)
    if (this.waitingLength + bytes > MAX_WAITING_BYTES) {
      this.dropped++
      return true
    }
    this.waiting.push(line)
    this.waitingBytes += bytes
    // stdout was full at the last attempt: the retry already planned writes this line too.
    if (this.head !== undefined) this.later(this.retryMs)
    else if (this.flushMs === 0 || this.waitingBytes >= BATCH_BYTES) this.flushNow()
    else this.later(this.flushMs)
    return true
  }

  /** pino's logger.flush(): writes what waits, as far as stdout takes it now. */
  flush(cb?: (err?: Error) => void): void {
    this.flushNow()
    cb?.()
  }

  /** Bytes waiting to be written. */
  get waitingLength(): number {
    return this.waitingBytes + (this.head?.length ?? 0)
  }

  /** No more lines (tests): what waits is tried once more, then forgotten. */
  close(): void {
    this.flushNow()
    this.clearTimer()
    open.delete(this)
  }

  private flushNow(): void {
    this.clearTimer()
    if (this.gone) return
    if (this.dropped > 0) {
      // Said in the stream itself, where the gap is, once stdout takes lines again.
      this.waiting.push(`${JSON.stringify({ level: 40, time: Date.now(), svc: 'cod', dropped: this.dropped, msg: 'log lines dropped: stdout took nothing for a while' })}\n`)
      this.dropped = 0
    }
    const parts = this.waiting.length === 0 ? [] : [Buffer.from(this.waiting.join(''))]
    let buf = Buffer.concat(this.head === undefined ? parts : [this.head, ...parts])
    this.waiting = []
    this.waitingBytes = 0
    this.head = undefined
    while (buf.length > 0) {
      let n: number
      try {
        n = this.writeSync(this.fd, buf)
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') break
        // EPIPE (the reader went away), EBADF (stdout closed)...: nothing will be written again.
        this.gone = true
        return
      }
      if (n <= 0) break
      buf = buf.subarray(n)
    }
    if (buf.length === 0) return
    // A full pipe: what is left waits (bounded by write()) and is tried again later.
    this.head = buf
    this.later(this.retryMs)
  }

  private get retryMs(): number {
    return this.flushMs > 0 ? this.flushMs : RETRY_MS
  }

  private later(ms: number): void {
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.flushNow()
    }, ms)
    // Waiting lines never keep the process alive: the exit hook writes them.
    this.timer.unref()
  }

  private clearTimer(): void {
    if (this.timer === undefined) return
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
