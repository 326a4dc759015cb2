/**
 * Every FreeSWITCH event header the daemon reads, by name. FsEvent (types.ts) is typed by this
 * list, so reading a header that is not here does not compile; and the channel events that make
 * up most of what FreeSWITCH sends are read for these headers only (event-json.ts says why).
 * A reader of a new header adds it here.
 *
 * Names as FreeSWITCH writes them (switch_event.c, switch_channel.c: the captures in
 * test/fixtures/freeswitch/esl/); channel variables arrive as `variable_<name>`.
 */
import { CHANNEL_VARS } from './channel-vars.js'

/** Headers of every event, and of channel events before their variables. */
const CORE_HEADERS = [
  'Event-Name',
  'Event-Subclass',
  'Event-Date-Timestamp',
  'Unique-ID',
  'Channel-Name',
  'Channel-Presence-ID',
  'Call-Direction',
  'Answer-State',
  'Hangup-Cause',
  'Other-Leg-Unique-ID',
  'Bridge-A-Unique-ID',
  'Bridge-B-Unique-ID',
  'Caller-Caller-ID-Name',
  'Caller-Caller-ID-Number',
  'Caller-Callee-ID-Number',
  'Caller-Destination-Number',
  'Caller-Privacy-Hide-Number',
  'Caller-Channel-Created-Time',
  'Caller-Channel-Answered-Time',
  // BACKGROUND_JOB: the job and its result (the body).
  'Job-UUID',
  'Job-Command',
  '_body',
  // CHANNEL_EXECUTE_COMPLETE of the daemon's own `execute` (pbx/connection.ts, the IVR), which
  // its ESL filter lets through by Application-UUID-Name (event-filter.ts).
  'Application',
  'Application-UUID',
  'Application-UUID-Name',
  'Application-Response',
  // sofia::register / unregister / expire (pbx/box-registrations.ts).
  'username',
  'user',
  'from-user',
  'realm',
  'host',
  'from-host',
  'expires',
] as const

/** The `cod_*` variables (pbx/channel-vars.ts). */
export type CodVariable = (typeof CHANNEL_VARS)[keyof typeof CHANNEL_VARS]

/** Channel variables the daemon reads from events, besides its own `cod_*` ones. */
const OTHER_VARIABLES = [
  // The domain a channel belongs to (channels/headers.ts domainOfEvent) and the user it rings.
  'domain_name',
  'dialed_domain',
  'presence_id',
  'sip_to_host',
  'sip_gateway_name',
  'user_name',
  'dialed_user',
  'hangup_cause',
  // A parked IVR call (ivr/runner/call.ts) and its DTMF input (ivr/elements/get-digits.ts).
  'cod_ivr_url',
  'cod_ivr_extension',
  'cod_ivr_request',
  'cod_ivr_digits',
  'channel_cid_flipped',
  'sip_to_user',
  'origination_caller_id_number',
  'origination_caller_id_name',
  // The outcome of an IVR element's application (ivr/elements/play.ts, transfer.ts).
  'playback_terminator_used',
  'originate_disposition',
  'originate_failed_cause',
  // A recording FreeSWITCH could not write says so only here, on the leg's CHANNEL_HANGUP
  // (recording/follow.ts; test/fixtures/freeswitch/esl/29).
  'record_completion_cause',
  // Who hung up a SIP leg (status events' hangup_by: callbacks/status-events.ts).
  'sip_hangup_disposition',
  // What the IVR's record and play_and_detect_speech gave (ivr/elements/record.ts, get-input.ts;
  // test/fixtures/freeswitch/esl/40-42).
  'record_ms',
  'detect_speech_result',
  // mod_spandsp's result of txfax/rxfax (ivr/fax/result.ts; test/fixtures/freeswitch/esl/45, 46).
  'fax_success',
  'fax_result_code',
  'fax_result_text',
  'fax_document_transferred_pages',
] as const

/** A channel variable the daemon reads from events. */
export type EventVariable = CodVariable | (typeof OTHER_VARIABLES)[number]

/** An event header the daemon reads. */
export type EventHeader = (typeof CORE_HEADERS)[number] | `variable_${EventVariable}`

/** The event header of a channel variable. */
export const varHeader = <N extends EventVariable>(name: N): `variable_${N}` => `variable_${name}`

/** Every header the daemon reads, once each. */
export const EVENT_HEADERS: readonly EventHeader[] = [
  ...new Set<EventHeader>([...CORE_HEADERS, ...Object.values(CHANNEL_VARS).map(varHeader), ...OTHER_VARIABLES.map(varHeader)]),
]
