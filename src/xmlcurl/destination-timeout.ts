/**
 * Issue 13 D3: how long a destination rings. The dialplan's bridge to a user's terminals or to a
 * PSTN number had no bound: FreeSWITCH's originate default (60 s, or the originating channel's
 * call_timeout) only when something set it, and our documents set nothing, so an unanswered
 * destination rang as long as the caller stayed. The domain's `destination_timeout` is set as
 * call_timeout before that bridge (switch_ivr_originate.c reads call_timeout of the calling
 * channel); when it expires the bridge fails NO_ANSWER and the route's final
 * `hangup ${originate_disposition}` ends the calling leg with that cause.
 *
 * Only for the documents the dialplan serves: group hunts set their own per-member call_timeout,
 * and the IVR runner's Transfer sets its answerTimeout before the same route actions.
 */
import type { Action } from './routes.js'

/** A bridge to one destination: `user/...` or `sofia/gateway/...` (not a hunt's `[leg_timeout=..]user/`). */
const SINGLE_DESTINATION = /^(user|sofia\/gateway)\//

export function withDestinationTimeout(actions: readonly Action[], seconds: number): Action[] {
  const at = actions.findIndex((a) => a.app === 'bridge' && SINGLE_DESTINATION.test(a.data ?? ''))
  if (at < 0 || actions.slice(0, at).some((a) => a.app === 'set' && (a.data ?? '').startsWith('call_timeout='))) return [...actions]
  return [...actions.slice(0, at), { app: 'set', data: `call_timeout=${seconds}` }, ...actions.slice(at)]
}
