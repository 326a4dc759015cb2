/**
 * The record FreeSWITCH keeps of each leg the daemon originates, in mod_hash, so that the leg's
 * fate can be read back after the daemon was away (a crash, a restart, a lost ESL link): the
 * daemon cannot hear the events of a time it was not listening, but FreeSWITCH's hash outlives
 * it (docs/design.md "Recovery").
 *
 * - On answer: `answered` (the originate's `api_on_answer`, pbx/commands.ts answerRecordVar).
 * - On hangup: `<CAUSE>:<answer_epoch>` (the originate's `api_hangup_hook`, commands.ts
 *   hangupRecordVar), overwriting `answered`.
 *
 * One entry per leg: realm `cod_<domain>`, key `<request id>.<leg uuid>`. Read with
 * `hash select`, removed with `hash delete` once the request's result is safely journaled.
 */
import type { HashSlot } from './commands.js'
import { LEG_RECORD_ANSWERED } from './commands.js'

/** Where the leg `uuid` of request `requestId` in `domain` is recorded. */
export const legRecordSlot = (domain: string, requestId: string, uuid: string): HashSlot => ({
  realm: `cod_${domain.toLowerCase()}`,
  key: `${requestId}.${uuid.toLowerCase()}`,
})

/** What a leg's record says. */
export type LegRecord =
  /** It answered (and may still be up, or ended with a cause nobody recorded). */
  | { readonly kind: 'answered'; readonly cause: string | undefined }
  /** It hung up without ever answering, with this cause. */
  | { readonly kind: 'failed'; readonly cause: string }

const CAUSE = /^[A-Z][A-Z0-9_]{1,63}$/

/** Reads a `hash select` reply; undefined when there is no record (or it is not ours). */
export function parseLegRecord(reply: string): LegRecord | undefined {
  const v = reply.trim()
  if (v === LEG_RECORD_ANSWERED) return { kind: 'answered', cause: undefined }
  const m = /^([A-Z][A-Z0-9_]*):([0-9]*)$/.exec(v)
  if (m === null) return undefined
  const cause = m[1] as string
  if (!CAUSE.test(cause)) return undefined
  const answerEpoch = Number(m[2] === '' ? '0' : m[2])
  return answerEpoch > 0 ? { kind: 'answered', cause } : { kind: 'failed', cause }
}
