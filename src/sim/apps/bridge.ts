/**
 * The `bridge` application (mod_dptools.c audio_bridge_function) and what FreeSWITCH does when
 * it fails (switch_channel.c switch_channel_handle_cause).
 *
 * Success (test/fixtures/freeswitch/esl/19-originate-xml-default.txt and 21-uuid-transfer.txt): B
 * legs are created with Other-Leg = A and Channel-Call-UUID = A; when one answers, A is answered if
 * it was not, A gets originate_disposition=SUCCESS, DIALSTATUS=SUCCESS, and one CHANNEL_BRIDGE
 * fires on A. When B hangs up, one CHANNEL_UNBRIDGE fires on A and A then hangs up if
 * hangup_after_bridge=true (with B's cause), parks if park_after_bridge=true, else goes on with the
 * next dialplan action.
 *
 * Failure: originate_disposition and DIALSTATUS (switch_ivr_originate), originate_failed_cause
 * (audio_bridge_function), then switch_channel_handle_cause: with neither continue_on_fail nor
 * failure_causes, NO_ANSWER, NO_USER_RESPONSE and ORIGINATOR_CANCEL go on to the next action and
 * any other cause hangs A up with that cause; continue_on_fail=true goes on for every cause, a
 * list (`USER_BUSY,NO_ANSWER` or numbers) for those causes; failure_causes is the opposite list.
 * (last_bridge_hangup_cause is only set when a bridge that happened ends.)
 */
import { originate } from '../calls/originate.js'
import type { Switch } from '../core/switch.js'
import { causeNumber } from '../model/causes.js'
import { untilAborted } from '../model/clock.js'
import type { Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'
import { isTrue } from '../text/switch-true.js'

/** switch_ivr_originate: DIALSTATUS for a failed originate with a calling session. */
function dialStatus(cause: string): string {
  switch (cause) {
    case 'ORIGINATOR_CANCEL':
      return 'CANCEL'
    case 'USER_BUSY':
      return 'BUSY'
    case 'NO_ANSWER':
      return 'NOANSWER'
    case 'DESTINATION_OUT_OF_ORDER':
    case 'INVALID_PROFILE':
      return 'INVALIDARGS'
    case 'CALL_REJECTED':
      return 'DONTCALL'
    default:
      return cause
  }
}

const inList = (list: string, cause: string): boolean =>
  separateString(list, ',').some((c) => c.toUpperCase() === cause || c === String(causeNumber(cause)))

/** switch_channel_handle_cause: go on with the dialplan, or hang up with the cause. */
function handleCause(sw: Switch, a: Session, cause: string): void {
  if (!a.up) return
  if (cause !== 'ATTENDED_TRANSFER') {
    const continueOnFail = a.getVar('continue_on_fail')
    const failureCauses = a.getVar('failure_causes')
    if (continueOnFail !== undefined || failureCauses !== undefined) {
      if (failureCauses !== undefined && !inList(failureCauses, cause)) return
      if (continueOnFail !== undefined && (isTrue(continueOnFail) || inList(continueOnFail, cause))) return
    } else if (cause === 'NO_ANSWER' || cause === 'NO_USER_RESPONSE' || cause === 'ORIGINATOR_CANCEL') {
      // "no answer is *always* a reason to continue"
      return
    }
  }
  if (a.next === undefined && a.runningState !== 'CS_ROUTING') sw.hangup(a, cause)
}

export async function bridgeApp(sw: Switch, a: Session, data: string, signal: AbortSignal): Promise<void> {
  if (data.trim() === '') return
  const res = await originate(sw, { dialString: data, caller: a, signal })
  const first = res.legs[0]
  if (!res.ok) {
    a.setVar('originate_disposition', res.cause)
    a.setVar('DIALSTATUS', dialStatus(res.cause))
    if (first !== undefined) a.setVar('originate_causes', `${first.uuid};${first.hangupCause ?? res.cause}`)
    a.setVar('originate_failed_cause', res.cause)
    handleCause(sw, a, res.cause)
    return
  }
  const b = res.session
  if (!a.up || signal.aborted) {
    sw.hangup(b, 'ORIGINATOR_CANCEL')
    return
  }
  a.setVar('originated_legs', `${b.uuid};Outbound Call;${b.profile.destinationNumber}`)
  a.setVar('originate_causes', `${b.uuid};NONE`)
  a.setVar('originate_disposition', 'SUCCESS')
  a.setVar('DIALSTATUS', 'SUCCESS')
  // The answer reaches the caller: an unanswered A (a phone that dialed) is answered now.
  if (!a.answered) sw.answer(a)
  const bridge = sw.linkBridge(a, b, true)
  b.setState('CS_EXCHANGE_MEDIA', 5)
  a.profile.calleeIdName = b.profile.calleeIdName
  a.profile.calleeIdNumber = b.profile.destinationNumber
  sw.fireBridge(bridge, 'CHANNEL_BRIDGE')
  const end = await Promise.race([bridge.done, untilAborted(signal).then(() => undefined)])
  if (end === undefined || end.by === 'a') return
  sw.afterBridge(a, end, false)
}
