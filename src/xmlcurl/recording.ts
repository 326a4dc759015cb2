/**
 * The recording actions of the answered leg's `cod_route` extension (issue 28), as the real
 * FreeSWITCH 1.10.12 proved them right (docs/recording.md "How FreeSWITCH records";
 * test/fixtures/freeswitch/esl/28-31):
 *
 * - `record_session <path>` on the answered A leg, before what connects it: FreeSWITCH opens the
 *   file (making its folders) and fires RECORD_START at once, and closes it at the hangup
 *   (RECORD_STOP). The leg's media bug sees both directions of the call.
 * - `RECORD_STEREO=true`: one party per channel, left = the A leg's party, right = the other
 *   (esl/28: the tone sent as alice is on the left, bob's on the right).
 * - `RECORD_BRIDGE_REQ=true` for a destination that is bridged (user, group, PSTN): the bug writes
 *   nothing until the leg is bridged (switch_core_io.c skips bugs with SMBF_BRIDGE_REQ while
 *   CF_BRIDGED is unset), so the file holds the conversation, not the ringback: esl/28's
 *   record_ms equals the time from CHANNEL_BRIDGE to the hangup. A bridge that never connects
 *   leaves no file (esl/30: RECORD_STOP with Record-Completion-Cause `empty-file`).
 * - An IVR destination records from the answer (the leg is answered when cod_route runs): no
 *   bridge requirement (esl/31).
 *
 * The path comes from the daemon (src/recording: `<recording.dir>/<domain>/<id>.wav`), and
 * nothing of a request is in it: the id was checked to be a UUID (leg.ts). A path this module
 * cannot put into application data, or no path at all, leaves the call unrecorded rather than
 * failing it (issue 28: a refused write never stops the call); the daemon is told why.
 */
import { checkValue } from '../pbx/commands.js'
import { err, type Result } from '../util/result.js'
import type { Action } from './routes.js'
import type { RouteTarget } from './route-target.js'

/** How the dialplan gets a recording's file: injected, since the store and its folder are the daemon's (src/recording). */
export interface DialplanRecording {
  /** Where FreeSWITCH writes recording `id` of `domain` (src/recording RecordingStore.recordingFile). */
  recordingFile(domain: string, id: string): Result<string, string>
  /** The dialplan could not arm recording `id` (why): the call goes on unrecorded. */
  recordingRefused?(domain: string, id: string, reason: string): void
}

/** What a recording waits for: the bridge (a bridged destination) or nothing (the answered leg, an IVR). */
const bridged = (target: RouteTarget): boolean => target.kind === 'user' || target.kind === 'group' || target.kind === 'pstn'

/** The actions that start the recording of `path`, to run just before the leg is connected. */
function recordingActions(target: RouteTarget, path: string): Action[] {
  return [
    { app: 'set', data: 'RECORD_STEREO=true' },
    ...(bridged(target) ? [{ app: 'set', data: 'RECORD_BRIDGE_REQ=true' }] : []),
    { app: 'record_session', data: path },
  ]
}

/** Where the leg is connected: the first `bridge`, or the `park` that hands it to the IVR runner; -1 when none. */
export const connectingAction = (actions: readonly Action[]): number => actions.findIndex((a) => a.app === 'bridge' || a.app === 'park')

/**
 * `actions` with the recording armed just before the first action that connects the leg
 * (`bridge`, or `park` for the IVR runner). Without such an action (a group with no member left
 * to ring) there is nothing to record and the list is returned as it is.
 */
export function withRecording(actions: readonly Action[], target: RouteTarget, path: string): Action[] {
  const at = connectingAction(actions)
  if (at < 0) return [...actions]
  return [...actions.slice(0, at), ...recordingActions(target, path), ...actions.slice(at)]
}

/**
 * The file of recording `id`, or why none: the daemon's answer, checked against what application
 * data may hold (values.ts: the same alphabet as every value we write, so a `recording.dir`
 * with a space or a `$` never reaches FreeSWITCH's expansion).
 */
export function recordingPath(recording: DialplanRecording, domain: string, id: string): Result<string, string> {
  const file = recording.recordingFile(domain, id)
  if (!file.ok) return file
  const checked = checkValue('appValue', 'recording file', file.value)
  if (!checked.ok) return err(`the recording file has characters application data may not hold: ${JSON.stringify(file.value)}`)
  return file
}
