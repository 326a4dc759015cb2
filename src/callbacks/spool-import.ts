/**
 * Upgrading from the spool file: a `callbacks.spool_file` that an older version wrote at its
 * shutdown is read at start, each entry becomes a journal result record (same delivery id, same
 * body bytes, its attempts so far), and the file is removed only once they are all durable. Lines
 * that cannot be read are logged at error level in full, so nothing vanishes; a file that cannot
 * be read is left as it is.
 */
import type { Journal, PendingResult } from '../journal/types.js'
import type { Logger } from '../util/logger.js'
import { readSpool, removeSpoolSync } from './spool.js'

/** The entries moved into the journal (already durable there), as pending results. */
export async function importSpool(file: string, journal: Journal, logger: Logger, giveUpAfterMs: number): Promise<PendingResult[]> {
  const r = await readSpool(file)
  if (!r.ok) {
    logger.error({ file, error: r.error }, 'spool file could not be read; it is left as it is')
    return []
  }
  for (const line of r.value.bad) logger.error({ file, line }, 'unreadable spool line: not delivered (kept in this log line)')
  const pending: PendingResult[] = []
  for (const e of r.value.entries) {
    const result = { deliveryId: e.delivery_id, requestId: e.request_id, domain: e.domain, url: e.url, body: e.body, createdAt: e.created_at }
    const progress = { attempts: e.attempts, nextAttemptAt: 0, giveUpAt: e.created_at + giveUpAfterMs }
    await Promise.all([journal.result(result), journal.attempted(e.delivery_id, progress)])
    pending.push({ result, progress })
  }
  if (r.value.entries.length === 0 && r.value.bad.length === 0) return pending
  const removed = removeSpoolSync(file)
  if (!removed.ok) logger.warn({ file, error: removed.error }, 'spool file could not be removed (its entries are in the journal now)')
  logger.info({ file, count: pending.length }, 'spool file of an earlier version moved into the journal')
  return pending
}
