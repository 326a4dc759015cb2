/**
 * FreeSWITCH channel events as header maps, modelled on the real captures in
 * test/fixtures/freeswitch/esl: the state triples [Channel-State / Channel-Call-State /
 * Answer-State] of 00-event-sequences.txt, Event-Date-Timestamp in microseconds, every value a
 * string, Other-Leg-Unique-ID on a leg created by a dialplan bridge (19-originate-xml-default),
 * one CHANNEL_BRIDGE/UNBRIDGE on the A leg with Bridge-A/B-Unique-ID (18-uuid-bridge).
 */
import { encodeEndUser } from '../../src/pbx/commands.js'
import type { FsEvent } from '../../src/pbx/types.js'
import type { EndUser } from '../../src/pbx/end-user.js'

const CORE_UUID = '9e20062f-756f-468c-84e0-efe5d3679f9a'
/** 2026-11-22 06:08:53 UTC, as in test/fixtures/freeswitch/esl/19-originate-xml-default.txt. */
export const T0_MS = 1795327733643

const STATES: Record<string, [string, string, string]> = {
  CHANNEL_CREATE: ['CS_INIT', 'DOWN', 'ringing'],
  CHANNEL_PROGRESS: ['CS_CONSUME_MEDIA', 'DOWN', 'ringing'],
  CHANNEL_ANSWER: ['CS_CONSUME_MEDIA', 'RINGING', 'answered'],
  CHANNEL_PARK: ['CS_EXECUTE', 'ACTIVE', 'answered'],
  CHANNEL_BRIDGE: ['CS_EXECUTE', 'ACTIVE', 'answered'],
  CHANNEL_UNBRIDGE: ['CS_EXECUTE', 'ACTIVE', 'answered'],
  CHANNEL_EXECUTE_COMPLETE: ['CS_EXECUTE', 'ACTIVE', 'answered'],
  CHANNEL_HANGUP: ['CS_EXECUTE', 'ACTIVE', 'hangup'],
  CHANNEL_HANGUP_COMPLETE: ['CS_REPORTING', 'HANGUP', 'hangup'],
  CHANNEL_DESTROY: ['CS_REPORTING', 'HANGUP', 'hangup'],
}

let sequence = 1385

/** One channel event: the headers every capture shows, plus `extra` (variable_*, Other-Leg-*, ...). */
export function ev(name: string, uuid: string, atMs: number, extra: Record<string, string> = {}): FsEvent {
  const [state, callState, answerState] = STATES[name] ?? ['CS_EXECUTE', 'ACTIVE', 'answered']
  const micros = String(atMs * 1000 + 318)
  sequence += 1
  // Every header a capture shows, those the daemon does not read included.
  const headers: Record<string, string> = {
    'Event-Name': name,
    'Core-UUID': CORE_UUID,
    'FreeSWITCH-Hostname': 'vm',
    'Event-Date-Timestamp': micros,
    'Event-Calling-File': 'switch_core_state_machine.c',
    'Event-Sequence': String(sequence),
    'Channel-State': state,
    'Channel-Call-State': callState,
    'Answer-State': answerState,
    'Unique-ID': uuid,
    'Channel-Call-UUID': uuid,
    'Call-Direction': 'outbound',
    'Caller-Direction': 'outbound',
    'Caller-Unique-ID': uuid,
    'Caller-Channel-Created-Time': String(T0_MS * 1000 + 318),
    'Caller-Channel-Answered-Time': name === 'CHANNEL_CREATE' || name === 'CHANNEL_PROGRESS' ? '0' : micros,
    variable_uuid: uuid,
    ...(name.includes('HANGUP') || name === 'CHANNEL_DESTROY' ? { 'Hangup-Cause': 'NORMAL_CLEARING' } : {}),
    ...extra,
  }
  return headers as FsEvent
}

export interface CallExternal {
  /** The PSTN leg the API originated (through the gateway), carrying the request's end_user. */
  readonly a: string
  /** The user's leg the dialplan bridged to A (no cod_end_user of its own). */
  readonly b: string
  readonly domain: string
  readonly userId: string
  readonly sipUser: string
  readonly requestId: string
  readonly endUser: EndUser
}

const varsOfA = (c: CallExternal): Record<string, string> => ({
  'Channel-Name': 'sofia/internal/0311112222@192.0.2.10',
  'Caller-Caller-ID-Name': 'Example Corp',
  'Caller-Caller-ID-Number': '0501230000',
  'Caller-Destination-Number': '0311112222',
  variable_sip_gateway_name: 'pstn',
  variable_cod_request_id: c.requestId,
  variable_cod_domain: c.domain,
  variable_cod_operation: 'call_external',
  variable_cod_role: 'originator',
  variable_cod_dest_kind: 'user',
  variable_cod_dest_value: c.userId,
  variable_cod_end_user: encodeEndUser(c.endUser),
})

const varsOfB = (c: CallExternal): Record<string, string> => ({
  'Channel-Name': `sofia/internal/${c.sipUser}@127.0.0.1:5072`,
  'Channel-Call-UUID': c.a,
  'Other-Type': 'originator',
  'Other-Leg-Unique-ID': c.a,
  'Caller-Caller-ID-Name': 'Example Corp',
  'Caller-Caller-ID-Number': '0311112222',
  'Caller-Destination-Number': c.sipUser,
  variable_dialed_user: c.sipUser,
  variable_dialed_domain: c.domain,
  variable_presence_id: `${c.sipUser}@${c.domain}`,
  variable_cod_domain: c.domain,
  variable_cod_user_id: c.userId,
  variable_cod_role: 'destination',
})

/** A rings and answers (the API's leg), then the dialplan rings B, which answers and is bridged. */
export function callExternalUntilBridged(c: CallExternal, t = T0_MS): FsEvent[] {
  const a = varsOfA(c)
  const b = varsOfB(c)
  return [
    ev('CHANNEL_CREATE', c.a, t, a),
    ev('CHANNEL_PROGRESS', c.a, t + 100, a),
    ev('CHANNEL_ANSWER', c.a, t + 2000, a),
    ev('CHANNEL_CREATE', c.b, t + 2100, b),
    ev('CHANNEL_PROGRESS', c.b, t + 2200, b),
    ev('CHANNEL_ANSWER', c.b, t + 4000, b),
    ev('CHANNEL_BRIDGE', c.a, t + 4001, {
      ...a,
      'Bridge-A-Unique-ID': c.a,
      'Bridge-B-Unique-ID': c.b,
      'Other-Type': 'originatee',
      'Other-Leg-Unique-ID': c.b,
    }),
  ]
}

/**
 * B hangs up (BYE), A is unbridged and hung up, both destroyed (order of
 * test/fixtures/freeswitch/esl/19-originate-xml-default.txt).
 */
export function callExternalHangup(c: CallExternal, t = T0_MS + 10000): FsEvent[] {
  const a = { ...varsOfA(c), 'Other-Leg-Unique-ID': c.b }
  const b = varsOfB(c)
  return [
    ev('CHANNEL_HANGUP', c.b, t, b),
    ev('CHANNEL_HANGUP_COMPLETE', c.b, t + 1, b),
    ev('CHANNEL_UNBRIDGE', c.a, t + 2, { ...a, 'Bridge-A-Unique-ID': c.a, 'Bridge-B-Unique-ID': c.b }),
    ev('CHANNEL_HANGUP', c.a, t + 3, a),
    ev('CHANNEL_HANGUP_COMPLETE', c.a, t + 4, a),
    ev('CHANNEL_DESTROY', c.a, t + 5, a),
    ev('CHANNEL_DESTROY', c.b, t + 6, b),
  ]
}

/**
 * A leg the API originated to a user's terminal (call_user), parked:
 * test/fixtures/freeswitch/esl/07-originate-user-form.txt plus our variables.
 */
export function userLegParked(uuid: string, domain: string, userId: string, sipUser: string, t = T0_MS): FsEvent[] {
  const v = {
    'Channel-Name': `sofia/internal/${sipUser}@127.0.0.1:5071`,
    'Caller-Caller-ID-Number': '0000000000',
    'Caller-Destination-Number': sipUser,
    variable_dialed_user: sipUser,
    variable_dialed_domain: domain,
    variable_presence_id: `${sipUser}@${domain}`,
    variable_cod_domain: domain,
    variable_cod_user_id: userId,
    variable_cod_request_id: `req-${uuid.slice(0, 8)}`,
    variable_cod_operation: 'call_user',
    variable_cod_role: 'originator',
    variable_cod_auto_answer: 'true',
  }
  return [
    ev('CHANNEL_CREATE', uuid, t, v),
    ev('CHANNEL_PROGRESS', uuid, t + 100, v),
    ev('CHANNEL_ANSWER', uuid, t + 1000, v),
    ev('CHANNEL_PARK', uuid, t + 1001, v),
  ]
}

/** A call a phone places (inbound leg, authenticated: variable_user_name/domain_name, sofia.c). */
export function phoneCallCreated(uuid: string, domain: string, sipUser: string, dialed: string, t = T0_MS): FsEvent[] {
  const v = {
    'Call-Direction': 'inbound',
    'Caller-Direction': 'inbound',
    'Channel-Name': `sofia/internal/${sipUser}@${domain}`,
    'Caller-Caller-ID-Name': sipUser,
    'Caller-Caller-ID-Number': sipUser,
    'Caller-Destination-Number': dialed,
    variable_sip_authorized: 'true',
    variable_user_name: sipUser,
    variable_domain_name: domain,
    variable_sip_to_host: domain,
  }
  return [ev('CHANNEL_CREATE', uuid, t, v), ev('CHANNEL_PROGRESS', uuid, t + 50, v)]
}
