/**
 * One queue per domain (p-queue, concurrency_per_domain): a slow or dead receiver only ever
 * occupies its own domain's slots. The concurrency is read at each use, so a reload (SIGHUP)
 * applies to queues that already exist.
 */
import PQueue from 'p-queue'

export class DomainQueues {
  private readonly queues = new Map<string, PQueue>()

  /** Queues `task` on the domain's queue; the promise settles when the task ran. */
  add(domain: string, concurrency: number, task: () => Promise<void>): Promise<void> {
    let q = this.queues.get(domain)
    if (q === undefined) {
      q = new PQueue({ concurrency })
      this.queues.set(domain, q)
    } else if (q.concurrency !== concurrency) {
      q.concurrency = concurrency
    }
    return q.add(task)
  }

  /** Drops every task not started yet (shutdown: those deliveries stay pending in the journal). */
  clear(): void {
    for (const q of this.queues.values()) q.clear()
  }
}
