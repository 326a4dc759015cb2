/**
 * Why the engine did not place a request: a domain outcome, not an HTTP error. The API maps
 * each reason to its error id and status (api/refusals.ts); the engine knows nothing of HTTP.
 * A refused request never gets a result callback: the refusal is its only answer.
 */
import type { PbxError } from '../pbx/types.js'

export type RefusalReason =
  /** call_user: the user has no registered SIP terminal. */
  | 'user_not_registered'
  /** call_group: no member of the group has a registered SIP terminal. */
  | 'no_member_available'
  /** The domain's channel_limit would be exceeded by the legs the request needs. */
  | 'channel_limit_reached'
  /** FreeSWITCH is not connected, did not answer in time, or the daemon is stopping. */
  | 'pbx_unavailable'
  /** The cluster's shared state (Redis) cannot be asked, so the shared channel limit cannot be checked (docs/cluster.md). */
  | 'cluster_unavailable'
  /** Anything else: a bug, a refused command, an unknown domain. */
  | 'internal'

export interface OriginationRefusal {
  readonly reason: RefusalReason
  /** For the developer reading the reply: what was refused and why. */
  readonly description: string
}

export const refusal = (reason: RefusalReason, description: string): OriginationRefusal => ({ reason, description })

/** A command FreeSWITCH refused is our fault (internal); one it never answered means it is unavailable. */
export const pbxRefusal = (e: PbxError, what: string): OriginationRefusal =>
  e.kind === 'failed'
    ? refusal('internal', `FreeSWITCH refused ${what}: ${e.reply}`)
    : refusal('pbx_unavailable', `FreeSWITCH did not answer ${what} (${e.kind})`)

export const STOPPING: OriginationRefusal = refusal('pbx_unavailable', 'the daemon is stopping')
