/**
 * Group commit: many appends, few durable writes. A durable write costs about the same for one
 * record as for a hundred, so appends are not written one by one: those arriving in the same turn
 * of the event loop, and all those arriving while a write runs, go out together in the next one,
 * and every caller of the batch resolves when its write is durable. Under load the batch grows by
 * itself (the slower the disk, the bigger the batch); when idle an append waits for no timer.
 *
 * An append may also be unhurried: durable soon rather than at once (a request's `ended`, which
 * nobody waits for: file-journal.ts). It rides with the next batch, and only if none comes within
 * `unhurriedMs` does it go out on its own. In the api benchmark each call made three appends and
 * nearly three durable writes (a write took less time than the gap between appends); each cost
 * the daemon a trip to libuv's thread pool and a write there (docs/bench.md, session 7).
 *
 * The committer owns the order of file operations: `commit` (the durable write) and `between`
 * (e.g. a compaction swapping the segment) never overlap.
 */

export interface CommitTarget {
  /** Writes the text at the end of the segment and makes it durable. */
  commit(text: string): Promise<void>
  /** Runs after each batch, before the next one starts (compaction). */
  between(): Promise<void>
  /** A batch failed: its callers resolve anyway (the failure is the target's to log and count). */
  failed(e: unknown, records: number): void
}

export interface GroupCommitOptions {
  /** How long an unhurried append waits for a batch to ride with. Default 50 ms. */
  readonly unhurriedMs?: number
}

/** How an append is written: `unhurried`, durable soon rather than at once (see the file comment). */
export interface AppendOptions {
  readonly unhurried?: boolean
}

interface Pending {
  readonly text: string
  readonly done: () => void
}

export class GroupCommitter {
  private queue: Pending[] = []
  /** The queue holds an append that must not wait (it starts a batch as soon as it can). */
  private hurried = false
  private running = false
  private timer: NodeJS.Timeout | undefined
  private idle: Array<() => void> = []
  private commitCount = 0
  private readonly unhurriedMs: number

  constructor(
    private readonly target: CommitTarget,
    opts: GroupCommitOptions = {},
  ) {
    this.unhurriedMs = opts.unhurriedMs ?? 50
  }

  /**
   * Resolves once `text` is durable (or its batch failed); never rejects. An unhurried append
   * starts no batch of its own before `unhurriedMs`.
   */
  append(text: string, o: AppendOptions = {}): Promise<void> {
    return new Promise((done) => {
      this.queue.push({ text, done })
      if (o.unhurried !== true) {
        this.hurried = true
        this.start()
      } else if (!this.running) {
        this.startUnhurried()
      }
    })
  }

  get commits(): number {
    return this.commitCount
  }

  /** Writes what is queued now (unhurried appends included) and resolves when nothing is queued or being written. */
  flushed(): Promise<void> {
    if (this.queue.length > 0) this.start()
    if (!this.running) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  private start(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.running) return
    this.running = true
    // setImmediate, not a timer: the appends of this turn join the batch, no delay is added.
    setImmediate(() => void this.drain())
  }

  /** Starts a batch after `unhurriedMs`, unless one starts before (or such a start is set already). */
  private startUnhurried(): void {
    this.timer ??= setTimeout(() => this.start(), this.unhurriedMs)
  }

  private async drain(): Promise<void> {
    // Everything queued goes out; a further batch only for an append that must not wait (or a
    // flush: `idle` waiters).
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      this.hurried = false
      try {
        await this.target.commit(batch.map((p) => p.text).join(''))
        this.commitCount++
      } catch (e) {
        this.target.failed(e, batch.length)
      }
      for (const p of batch) p.done()
      try {
        await this.target.between()
      } catch (e) {
        this.target.failed(e, 0)
      }
      if (!this.hurried && this.idle.length === 0) break
    }
    this.running = false
    // Unhurried appends that came during the last write wait for the next batch, or their time.
    if (this.queue.length > 0) this.startUnhurried()
    const waiters = this.idle
    this.idle = []
    for (const w of waiters) w()
  }
}
