/**
 * The spool side of the dispatcher's life: reading the file the last shutdown left, removing it
 * once everything read from it has ended, writing what is still undelivered at shutdown, and
 * appending results that arrive after that. Whatever cannot be written is logged at error level
 * with its body, so nothing vanishes. The file format is spool.ts's.
 */
import type { Logger } from '../util/logger.js'
import { parseTarget } from './policy.js'
import { appendSpoolSync, readSpool, removeSpoolSync, writeSpool, type SpoolEntry } from './spool.js'

export interface SpoolKeeperOptions {
  /** callbacks.spool_file, read at each use so that SIGHUP applies. */
  readonly spoolFile: () => string | undefined
  readonly logger: Logger
}

const LOST = 'callback not delivered before shutdown and not spooled (the result is in this log line)'

export class SpoolKeeper {
  private readonly spoolFile: () => string | undefined
  private readonly logger: Logger
  /** The spool file load() read: only that file may be replaced (else entries are appended). */
  private owned: string | undefined
  /** Deliveries read from the owned file that have not ended yet. */
  private fromSpoolLeft = 0
  /** Set when shutdown begins: the file is then the shutdown's to write, never removed. */
  private shuttingDown = false
  /** Entries written to the spool file, or logged in full when they could not be. */
  private spooledCount = 0

  constructor(opts: SpoolKeeperOptions) {
    this.spoolFile = opts.spoolFile
    this.logger = opts.logger
  }

  get spooled(): number {
    return this.spooledCount
  }

  /**
   * The entries the last shutdown left, or undefined when there is no spool file configured or
   * it cannot be read (then it is left as it is). Unreadable lines are logged in full.
   */
  async load(): Promise<{ file: string; entries: SpoolEntry[] } | undefined> {
    const file = this.spoolFile()
    if (file === undefined) return undefined
    const r = await readSpool(file)
    if (!r.ok) {
      this.logger.error({ file, error: r.error }, 'spool file could not be read; it is left as it is')
      return undefined
    }
    this.owned = file
    for (const line of r.value.bad) {
      this.logger.error({ file, line }, 'unreadable spool line: not delivered (kept in this log line)')
    }
    return { file, entries: r.value.entries }
  }

  /** A delivery read from the spool file was queued. */
  trackFromSpool(): void {
    this.fromSpoolLeft++
  }

  /** A delivery read from the spool file ended (delivered, failed or spooled again). */
  fromSpoolEnded(): void {
    this.fromSpoolLeft--
    this.releaseIfDone()
  }

  beginShutdown(): void {
    this.shuttingDown = true
  }

  /**
   * Everything read from the spool has ended: remove the file, so that a crash later does
   * not deliver those results again. (Shutdown writes a new one if needed.)
   */
  releaseIfDone(): void {
    if (this.fromSpoolLeft > 0 || this.shuttingDown || this.owned === undefined) return
    const r = removeSpoolSync(this.owned)
    if (!r.ok) this.logger.warn({ file: this.owned, error: r.error }, 'spool file could not be removed')
  }

  /** Shutdown: writes the undelivered entries (replacing the file load() read, else appending). */
  async persist(entries: SpoolEntry[]): Promise<void> {
    const file = this.spoolFile()
    if (file !== undefined) {
      if (file === this.owned) {
        // Replace: the file held only what load() read, and those are either done or in `entries`.
        const r = await writeSpool(file, entries)
        if (r.ok) {
          this.spooledCount += entries.length
          if (entries.length > 0) this.logger.warn({ file, count: entries.length }, 'undelivered callbacks written to the spool file')
          return
        }
        this.logger.error({ file, error: r.error }, 'spool file could not be written')
      } else {
        // Not read at start (or another file): never overwrite results of an earlier run.
        for (const e of entries) this.append(e)
        return
      }
    }
    for (const e of entries) this.logLost(e)
  }

  /** After the shutdown's write: one more entry, appended (synchronously: the process may exit next). */
  append(e: SpoolEntry): void {
    const file = this.spoolFile()
    if (file !== undefined) {
      const r = appendSpoolSync(file, e)
      if (r.ok) {
        this.spooledCount++
        this.logger.warn({ file, delivery_id: e.delivery_id, request_id: e.request_id }, 'callback appended to the spool file')
        return
      }
      this.logger.error({ file, error: r.error }, 'spool file could not be written')
    }
    this.logLost(e)
  }

  private logLost(e: SpoolEntry): void {
    this.spooledCount++
    this.logger.error(
      {
        domain: e.domain,
        request_id: e.request_id,
        delivery_id: e.delivery_id,
        url: redactUrl(e.url),
        attempts: e.attempts,
        body: e.body,
      },
      LOST,
    )
  }
}

const redactUrl = (url: string): string => {
  const t = parseTarget(url)
  return t.ok ? t.value.logUrl : '(invalid URL)'
}
