/**
 * Group commit: many appends, few fsyncs. An fsync costs about the same for one record as for a
 * hundred, so appends are not written one by one: those arriving in the same turn of the event
 * loop, and all those arriving while a write+fsync runs, go out together in the next one, and
 * every caller of the batch resolves when its fsync returned. Under load the batch grows by
 * itself (the slower the disk, the bigger the batch); when idle an append waits for no timer.
 *
 * The committer owns the order of file operations: `commit` (write+fsync) and `between` (e.g. a
 * compaction swapping the segment) never overlap.
 */

export interface CommitTarget {
  /** Writes the text at the end of the segment and makes it durable. */
  commit(text: string): Promise<void>
  /** Runs after each batch, before the next one starts (compaction). */
  between(): Promise<void>
  /** A batch failed: its callers resolve anyway (the failure is the target's to log and count). */
  failed(e: unknown, records: number): void
}

interface Pending {
  readonly text: string
  readonly done: () => void
}

export class GroupCommitter {
  private queue: Pending[] = []
  private running = false
  private idle: Array<() => void> = []
  private commitCount = 0

  constructor(private readonly target: CommitTarget) {}

  /** Resolves once `text` is durable (or its batch failed); never rejects. */
  append(text: string): Promise<void> {
    return new Promise((done) => {
      this.queue.push({ text, done })
      if (!this.running) {
        this.running = true
        // setImmediate, not a timer: the appends of this turn join the batch, no delay is added.
        setImmediate(() => void this.drain())
      }
    })
  }

  get commits(): number {
    return this.commitCount
  }

  /** Resolves when nothing is queued or being written. */
  flushed(): Promise<void> {
    if (!this.running) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
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
    }
    this.running = false
    const waiters = this.idle
    this.idle = []
    for (const w of waiters) w()
  }
}
