/**
 * What tests and demos see of a live channel (Simulator.liveChannels): a plain snapshot, so
 * nothing outside the simulator holds a session itself.
 */
import type { Session } from './model/session.js'

export interface SimChannelView {
  readonly uuid: string
  readonly name: string
  readonly direction: 'inbound' | 'outbound'
  /** Channel-State (CS_EXECUTE, CS_CONSUME_MEDIA...). */
  readonly state: string
  readonly callState: string
  readonly answered: boolean
  readonly destination: string
  readonly context: string
  readonly variables: Readonly<Record<string, string>>
  /** The bridged (or originating) other leg. */
  readonly otherLeg?: string
  readonly bridgedTo?: string
  readonly hangupCause?: string
  readonly application?: string
}

export function channelView(s: Session): SimChannelView {
  const bridged = s.bridge === undefined ? undefined : s.bridge.a === s ? s.bridge.b.uuid : s.bridge.a.uuid
  return {
    uuid: s.uuid,
    name: s.name,
    direction: s.direction,
    state: s.runningState,
    callState: s.callState,
    answered: s.answered,
    destination: s.profile.destinationNumber,
    context: s.profile.context,
    variables: Object.fromEntries(s.vars),
    ...(s.other !== undefined ? { otherLeg: s.other.uuid } : {}),
    ...(bridged !== undefined ? { bridgedTo: bridged } : {}),
    ...(s.hangupCause !== undefined ? { hangupCause: s.hangupCause } : {}),
    ...(s.currentApp !== undefined ? { application: s.currentApp.name } : {}),
  }
}
