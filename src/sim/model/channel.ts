/**
 * One simulated channel (a FreeSWITCH session) and the headers FreeSWITCH puts on its events:
 * switch_channel_event_set_basic_data, switch_caller_profile_event_set_data and the
 * `variable_*` list (switch_channel.c / switch_caller.c), in the order the captures show
 * (esl/06 CHANNEL_CREATE, esl/18 CHANNEL_BRIDGE).
 */
import type { Headers } from './events.js'
import { nowMicros } from './events.js'

export type Direction = 'inbound' | 'outbound'
export type AnswerState = 'ringing' | 'early' | 'answered' | 'hangup'

/** switch_caller_profile_t: the fields that reach events, mod_xml_curl and `show channels`. */
export interface CallerProfile {
  direction: Direction
  logicalDirection: Direction
  username?: string
  dialplan?: string
  callerIdName?: string
  callerIdNumber?: string
  origCallerIdName?: string
  origCallerIdNumber?: string
  calleeIdName?: string
  calleeIdNumber?: string
  networkAddr?: string
  ani?: string
  destinationNumber: string
  uniqueId: string
  source: string
  transferSource?: string
  context: string
  rdnis?: string
  channelName: string
  profileIndex: number
  profileCreated: number
}

/** Channel times in epoch µs, 0 when not reached (switch_channel_timetable_t). */
export interface Times {
  created: number
  answered: number
  progress: number
  progressMedia: number
  hangup: number
  transfer: number
  resurrect: number
  bridged: number
  lastHold: number
  holdAccum: number
}

/**
 * What the far end of a leg does (docs/design.md "Configuration contract", Simulated terminal and
 * PSTN behaviours).
 */
export interface FarEnd {
  readonly kind: 'terminal' | 'pstn' | 'phone'
  readonly label: string
  /** Seconds, or undefined when the far end never answers. */
  readonly answerAfter?: number
  readonly refuse?: 'busy' | 'reject' | 'unavailable' | 'deadContact'
  readonly hangupAfter?: number
  readonly dtmf?: string
  /** Seconds it talks once a `record` or a speech detection runs (sim/apps/ivr-input.ts). */
  readonly talk?: number
  /** A fax machine: it takes what txfax sends, and sends this many pages to rxfax (sim/apps/fax.ts). */
  readonly faxPages?: number
}

export type HangupDisposition = 'send_bye' | 'recv_bye' | 'send_cancel' | 'recv_cancel' | 'recv_refuse' | 'send_refuse'

export class SimChannel {
  readonly uuid: string
  name: string
  readonly direction: Direction
  /** Channel-State: the running state name. */
  runningState = 'CS_INIT'
  /**
   * Channel-State-Number: the state FreeSWITCH is moving to
   * (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt: CREATE is CS_INIT/2).
   */
  stateNumber = 2
  callState = 'DOWN'
  answerState: AnswerState = 'ringing'
  answered = false
  ringReady = false
  mediaUp = false
  hitDialplan = false
  presenceId?: string
  /**
   * Channel-Call-UUID: the A leg's uuid while bridged to it
   * (test/fixtures/freeswitch/esl/19-originate-xml-default.txt).
   */
  callUuid: string
  readonly vars = new Map<string, string>()
  profile: CallerProfile
  readonly times: Times
  /**
   * The bridged or originating other leg, as Other-Type/Other-Leg-*
   * (test/fixtures/freeswitch/esl/18-uuid-bridge.txt and 19-originate-xml-default.txt).
   */
  other?: { type: 'originator' | 'originatee'; uuid: string; profile: CallerProfile; times?: Times }
  hangupCause?: string
  hangupDisposition?: HangupDisposition
  /** Set once CHANNEL_DESTROY was fired. */
  destroyed = false
  readonly createdAt: Date
  farEnd?: FarEnd
  /** DTMF digits received and not yet consumed by an application. */
  dtmfBuffer = ''

  constructor(init: { uuid: string; name: string; direction: Direction; profile: Omit<CallerProfile, 'uniqueId' | 'channelName' | 'profileCreated' | 'profileIndex'> }) {
    this.uuid = init.uuid
    this.name = init.name
    this.direction = init.direction
    this.callUuid = init.uuid
    const now = nowMicros()
    this.createdAt = new Date(Math.floor(now / 1000))
    this.times = { created: now, answered: 0, progress: 0, progressMedia: 0, hangup: 0, transfer: 0, resurrect: 0, bridged: 0, lastHold: 0, holdAccum: 0 }
    this.profile = { ...init.profile, uniqueId: init.uuid, channelName: init.name, profileIndex: 1, profileCreated: now }
  }

  get up(): boolean {
    return this.hangupCause === undefined
  }

  setVar(name: string, value: string | undefined): void {
    // switch_channel_set_variable: an empty value removes the variable.
    if (value === undefined || value === '') this.vars.delete(name)
    else {
      // Re-setting moves nothing: FreeSWITCH keeps the variable where it was first added.
      this.vars.set(name, value)
    }
  }

  getVar(name: string): string | undefined {
    return this.vars.get(name)
  }

  setState(running: string, num: number): void {
    this.runningState = running
    this.stateNumber = num
  }

  /** switch_caller_profile_event_set_data with the given prefix (Caller, Other-Leg, Hunt...). */
  static profileHeaders(prefix: string, p: CallerProfile, t: Times | undefined): Headers {
    const h: Headers = []
    const add = (k: string, v: string | undefined): void => {
      if (v !== undefined && v !== '') h.push([`${prefix}-${k}`, v])
    }
    const time = (v: number | undefined): string => String(v ?? 0)
    add('Direction', p.direction)
    add('Logical-Direction', p.logicalDirection)
    add('Username', p.username)
    add('Dialplan', p.dialplan)
    add('Caller-ID-Name', p.callerIdName)
    add('Caller-ID-Number', p.callerIdNumber)
    add('Orig-Caller-ID-Name', p.origCallerIdName)
    add('Orig-Caller-ID-Number', p.origCallerIdNumber)
    add('Callee-ID-Name', p.calleeIdName)
    add('Callee-ID-Number', p.calleeIdNumber)
    add('Network-Addr', p.networkAddr)
    add('ANI', p.ani)
    add('Destination-Number', p.destinationNumber)
    add('Unique-ID', p.uniqueId)
    add('Source', p.source)
    add('Transfer-Source', p.transferSource)
    add('Context', p.context)
    add('RDNIS', p.rdnis)
    add('Channel-Name', p.channelName)
    add('Profile-Index', String(p.profileIndex))
    h.push([`${prefix}-Profile-Created-Time`, time(p.profileCreated)])
    h.push([`${prefix}-Channel-Created-Time`, time(t?.created)])
    h.push([`${prefix}-Channel-Answered-Time`, time(t?.answered)])
    h.push([`${prefix}-Channel-Progress-Time`, time(t?.progress)])
    h.push([`${prefix}-Channel-Progress-Media-Time`, time(t?.progressMedia)])
    h.push([`${prefix}-Channel-Hangup-Time`, time(t?.hangup)])
    h.push([`${prefix}-Channel-Transfer-Time`, time(t?.transfer)])
    h.push([`${prefix}-Channel-Resurrect-Time`, time(t?.resurrect)])
    h.push([`${prefix}-Channel-Bridged-Time`, time(t?.bridged)])
    h.push([`${prefix}-Channel-Last-Hold`, time(t?.lastHold)])
    h.push([`${prefix}-Channel-Hold-Accum`, time(t?.holdAccum)])
    h.push([`${prefix}-Screen-Bit`, 'true'])
    h.push([`${prefix}-Privacy-Hide-Name`, 'false'])
    h.push([`${prefix}-Privacy-Hide-Number`, 'false'])
    return h
  }

  /**
   * switch_channel_event_set_data: basic data, caller profile, other leg, variables.
   * `withHangupCause` is false for CHANNEL_HANGUP_COMPLETE, which carries the cause first.
   */
  eventData(withHangupCause = true): Headers {
    const h: Headers = [
      ['Channel-State', this.runningState],
      ['Channel-Call-State', this.callState],
      ['Channel-State-Number', String(this.stateNumber)],
      ['Channel-Name', this.name],
      ['Unique-ID', this.uuid],
      ['Call-Direction', this.direction],
      ['Presence-Call-Direction', this.direction],
      ['Channel-HIT-Dialplan', this.hitDialplan ? 'true' : 'false'],
    ]
    if (this.presenceId !== undefined) h.push(['Channel-Presence-ID', this.presenceId])
    h.push(['Channel-Call-UUID', this.callUuid])
    h.push(['Answer-State', this.answerState])
    if (withHangupCause && this.hangupCause !== undefined) h.push(['Hangup-Cause', this.hangupCause])
    if (this.mediaUp) {
      h.push(
        ['Channel-Read-Codec-Name', 'PCMU'],
        ['Channel-Read-Codec-Rate', '8000'],
        ['Channel-Read-Codec-Bit-Rate', '64000'],
        ['Channel-Write-Codec-Name', 'PCMU'],
        ['Channel-Write-Codec-Rate', '8000'],
        ['Channel-Write-Codec-Bit-Rate', '64000'],
      )
    }
    h.push(...SimChannel.profileHeaders('Caller', this.profile, this.times))
    if (this.other !== undefined) {
      h.push(['Other-Type', this.other.type])
      h.push(...SimChannel.profileHeaders('Other-Leg', this.other.profile, this.other.times))
    }
    for (const [k, v] of this.vars) h.push([`variable_${k}`, v])
    return h
  }
}
