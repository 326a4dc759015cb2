/**
 * The API's side of recovering the originates an earlier run wrote without deciding their reply
 * (journal/types.ts OriginateIntent; origination/recovery.ts decides from FreeSWITCH whether each
 * was placed). A placed one becomes what it would have been had the daemon lived: an accepted
 * request in the journal, and, when it carried an Idempotency-Key, the 200 a retry gets. One that
 * placed nothing is closed, and a retry with its key places the call. Until recovery decides, a
 * retry with the key waits (IdempotencyStore.pending), as it would for a request in flight.
 */
import type { Journal, JournalReplay } from '../journal/types.js'
import type { UnsettledIntents } from '../origination/recovery.js'
import type { IdempotencyStore } from './idempotency.js'

/** The body of the API's 200 for a placed request: the same bytes for the reply and for an Idempotency-Key's replay. */
export const placedReply = (uuids: readonly string[]): { result_code: 0; uuids: string[] } => ({ result_code: 0, uuids: [...uuids] })

export function unsettledIntents(journal: Pick<Journal, 'accepted' | 'unplaced'>, idempotency: IdempotencyStore, replayed: JournalReplay['unsettledIntents']): UnsettledIntents {
  const byId = new Map(replayed.map((i) => [i.requestId, i]))
  const waiting = new Map<string, (reply: string | undefined) => void>()
  for (const i of replayed) {
    if (i.idempotency !== undefined) waiting.set(i.requestId, idempotency.pending(i.domain, i.idempotency.key, i.idempotency.bodyDigest, i.requestId, i.intendedAt))
  }
  return {
    // An intent is the request as recovery reads it, without its key and its time.
    intents: replayed.map(({ idempotency: _key, intendedAt: _at, ...request }) => request),
    async settle(r, placed) {
      const intent = byId.get(r.requestId)
      if (intent === undefined) return
      const release = waiting.get(r.requestId)
      waiting.delete(r.requestId)
      if (!placed) {
        await journal.unplaced(r.requestId)
        release?.(undefined)
        return
      }
      const reply = JSON.stringify(placedReply(intent.uuids))
      const { idempotency, intendedAt: _at, ...request } = intent
      await journal.accepted({ ...request, ...(idempotency !== undefined ? { idempotency: { ...idempotency, reply } } : {}) })
      release?.(reply)
    },
  }
}
