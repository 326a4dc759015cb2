/**
 * The write-ahead side of the result journal, as the engine sees it (docs/callbacks.md
 * "Durability"; journal/types.ts OriginateIntent). A request's first originate is written to
 * FreeSWITCH only once its intent is durable, so that a crash before the API's `accepted` record
 * cannot leave a call running that no record names. Its own interface, wired by the daemon to
 * the journal (journalIntents below, typed structurally), so that the engine depends on no
 * journal module.
 */
import type { OriginationPlan } from './plan.js'
import type { RecoverableRequest } from './recoverable-request.js'

export interface OriginateIntents {
  /**
   * Resolves once the request's intent is durable (or could not be written: the journal logs and
   * counts that; the call goes on, as with every journal write). Called once per request, with
   * the UUIDs of its first originate.
   */
  intended(plan: OriginationPlan, uuids: readonly string[]): Promise<void>
  /** The request was refused after its intent: nothing of it was placed. */
  unplaced(plan: OriginationPlan): void
}

/**
 * The journal's two records (journal/types.ts Journal.intended / unplaced), as this module writes
 * them: an intent is the request recovery reads back (RecoverableRequest), with its key.
 */
export interface IntentJournal {
  intended(rec: RecoverableRequest & { readonly idempotency?: OriginationPlan['idempotency'] }): Promise<void>
  unplaced(requestId: string): Promise<void>
}

/**
 * A request without callback_url and without Idempotency-Key has nothing a crash could lose: no
 * result to deliver, no key to answer again (its channels are still counted by the channel model).
 * It pays no write-ahead fsync.
 */
const worthAnIntent = (plan: OriginationPlan): boolean => plan.callbackUrl !== undefined || plan.idempotency !== undefined

export function journalIntents(journal: IntentJournal, now: () => number = Date.now): OriginateIntents {
  return {
    intended(plan, uuids) {
      if (!worthAnIntent(plan)) return Promise.resolve()
      return journal.intended({
        requestId: plan.requestId,
        domain: plan.domain,
        operation: plan.operation,
        uuids,
        ...(plan.callbackUrl !== undefined ? { callbackUrl: plan.callbackUrl } : {}),
        answerDeadlineAt: now() + plan.answerTimeoutSec * 1000,
        ...(plan.idempotency !== undefined ? { idempotency: plan.idempotency } : {}),
      })
    },
    unplaced(plan) {
      if (worthAnIntent(plan)) void journal.unplaced(plan.requestId)
    },
  }
}
