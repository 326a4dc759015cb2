/**
 * FreeSWITCH events: the headers every event carries, in FreeSWITCH's order, and the bus that
 * hands them to the ESL connections. Header set and order follow the captures
 * (test/fixtures/freeswitch/README.md, "Facts that hold across the sessions";
 * test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt): Event-Name, Core-UUID,
 * FreeSWITCH-Hostname/-Switchname/-IPv4/-IPv6, Event-Date-Local/-GMT/-Timestamp (epoch µs),
 * Event-Calling-File/-Function/-Line-Number, Event-Sequence, then the event's own headers.
 */

/** Ordered header list; every value is a string (event-json values are strings). */
export type Headers = Array<[string, string]>

export interface SimEvent {
  readonly name: string
  readonly headers: Headers
  /** BACKGROUND_JOB result and other bodies (`_body` in JSON). */
  readonly body?: string
}

/**
 * Where FreeSWITCH fires each event (Event-Calling-*), as seen in the sessions 06, 09, 18, 19, 26 and 28
 * in test/fixtures/freeswitch/esl/ or, where no capture shows the event, from the v1.10.12 source.
 */
const CALLING: Readonly<Record<string, readonly [string, string, string]>> = {
  CHANNEL_CREATE: ['switch_core_state_machine.c', 'switch_core_session_run', '626'],
  CHANNEL_ORIGINATE: ['switch_core_state_machine.c', 'switch_core_session_run', '632'],
  CHANNEL_PROGRESS: ['switch_channel.c', 'switch_channel_perform_mark_ring_ready_value', '3505'],
  CHANNEL_PROGRESS_MEDIA: ['switch_channel.c', 'switch_channel_perform_mark_pre_answered', '3659'],
  CHANNEL_ANSWER: ['switch_channel.c', 'switch_channel_perform_mark_answered', '3846'],
  CHANNEL_PARK: ['switch_ivr.c', 'switch_ivr_park', '1002'],
  CHANNEL_UNPARK: ['switch_ivr.c', 'switch_ivr_park', '1213'],
  CHANNEL_HANGUP: ['switch_channel.c', 'switch_channel_perform_hangup', '3445'],
  CHANNEL_HANGUP_COMPLETE: ['switch_core_state_machine.c', 'switch_core_session_reporting_state', '943'],
  CHANNEL_DESTROY: ['switch_core_session.c', 'switch_core_session_perform_destroy', '1584'],
  CHANNEL_EXECUTE: ['switch_core_session.c', 'switch_core_session_exec', '2944'],
  CHANNEL_EXECUTE_COMPLETE: ['switch_core_session.c', 'switch_core_session_exec', '2967'],
  CHANNEL_BRIDGE: ['switch_ivr_bridge.c', 'switch_ivr_multi_threaded_bridge', '1689'],
  CHANNEL_UNBRIDGE: ['switch_ivr_bridge.c', 'switch_ivr_multi_threaded_bridge', '1879'],
  CHANNEL_CALLSTATE: ['switch_channel.c', 'switch_channel_perform_set_callstate', '301'],
  BACKGROUND_JOB: ['mod_event_socket.c', 'api_exec', '1572'],
  DTMF: ['switch_channel.c', 'switch_channel_queue_dtmf', '677'],
  CHANNEL_HOLD: ['switch_ivr.c', 'switch_ivr_hold', '1558'],
  CHANNEL_UNHOLD: ['switch_ivr.c', 'switch_ivr_unhold', '1638'],
  SHUTDOWN: ['switch_core.c', 'switch_core_destroy', '3023'],
  RECORD_START: ['switch_ivr_async.c', 'record_callback', '1481'],
  RECORD_STOP: ['switch_ivr_async.c', 'send_record_stop_event', '1240'],
}

export interface SwitchIdentity {
  readonly coreUuid: string
  readonly hostname: string
  readonly ipv4: string
  readonly ipv6: string
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0')

/** `2026-11-22 06:08:06` in local time, as Event-Date-Local. */
export function localStamp(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/** Wall clock in epoch microseconds (Event-Date-Timestamp and the *_uepoch variables). */
export const nowMicros = (): number => Math.floor((performance.timeOrigin + performance.now()) * 1000)

export type EventListener = (event: SimEvent) => void

export class EventBus {
  private sequence = 1000
  private readonly listeners = new Set<EventListener>()

  constructor(readonly identity: SwitchIdentity) {}

  on(listener: EventListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The headers every event starts with (also the start of mod_xml_curl forms). */
  coreHeaders(name: string, calling?: readonly [string, string, string]): Headers {
    const micros = nowMicros()
    const date = new Date(Math.floor(micros / 1000))
    const [file, fn, line] = calling ?? CALLING[name] ?? ['switch_event.c', 'switch_event_fire_detailed', '0']
    this.sequence++
    return [
      ['Event-Name', name],
      ['Core-UUID', this.identity.coreUuid],
      ['FreeSWITCH-Hostname', this.identity.hostname],
      ['FreeSWITCH-Switchname', this.identity.hostname],
      ['FreeSWITCH-IPv4', this.identity.ipv4],
      ['FreeSWITCH-IPv6', this.identity.ipv6],
      ['Event-Date-Local', localStamp(date)],
      ['Event-Date-GMT', date.toUTCString()],
      ['Event-Date-Timestamp', String(micros)],
      ['Event-Calling-File', file],
      ['Event-Calling-Function', fn],
      ['Event-Calling-Line-Number', line],
      ['Event-Sequence', String(this.sequence)],
    ]
  }

  /**
   * Fires a CUSTOM event of a subclass: `Event-Subclass` comes first, then the core headers with
   * Event-Name CUSTOM, then `headers` (test/fixtures/freeswitch/esl/27-sofia-register-events.txt).
   */
  fireCustom(subclass: string, calling: readonly [string, string, string], headers: Headers): SimEvent {
    const all: Headers = [['Event-Subclass', subclass], ...this.coreHeaders('CUSTOM', calling)]
    for (const h of headers) if (h[1] !== '') all.push(h)
    const event: SimEvent = { name: 'CUSTOM', headers: all }
    for (const l of [...this.listeners]) l(event)
    return event
  }

  /** Fires an event: core headers, then `headers`. Empty values are left out, as FreeSWITCH does. */
  fire(name: string, headers: Headers, body?: string): SimEvent {
    const all = this.coreHeaders(name)
    for (const h of headers) if (h[1] !== '') all.push(h)
    const event: SimEvent = body === undefined ? { name, headers: all } : { name, headers: all, body }
    for (const l of [...this.listeners]) l(event)
    return event
  }
}
