/**
 * Channel variables the daemon stamps on the legs it originates, and reads back from
 * FreeSWITCH events and mod_xml_curl dialplan requests (where they arrive as `variable_<name>`).
 * This is the contract between the originate command, the dialplan documents, the call
 * tracker and the simulator. Values are restricted to a safe alphabet (see pbx/commands.ts):
 * free text (end_user) travels percent-encoded.
 *
 * Routing of an originated leg once answered: the originate's dialplan target is
 *   `<ROUTE_EXTENSION> XML <domain>` (context = the domain name),
 * and the xml_curl dialplan handler builds the extension from the `cod_dest_*` variables below.
 * Calls that reach the domain otherwise (a phone dialing a number) are routed by their
 * destination number in the same context.
 */
export const CHANNEL_VARS = {
  /**
   * Our request id (docs/design.md "Lessons from FreeSWITCH": stamp every leg; `hupall <cause>
   * cod_request_id <id>` cancels).
   */
  requestId: 'cod_request_id',
  /** The domain the leg belongs to (channel limit, CTI isolation). */
  domain: 'cod_domain',
  /** call_user | call_group | call_external | initiate_call */
  operation: 'cod_operation',
  /** `originator` on originated legs, `destination` on legs created by the dialplan bridge. */
  role: 'cod_role',
  /** user id of the user a leg rings (originating user leg, or a bridged user leg). */
  userId: 'cod_user_id',
  /** group context (group id) the call is made for; also on hunt legs of call_group. */
  groupId: 'cod_group_id',
  groupName: 'cod_group_name',
  /** Destination of the answered leg: user | group | extension | pstn | ivr */
  destKind: 'cod_dest_kind',
  /** user id, group id, extension number, PSTN number, or (ivr) the request id of the document */
  destValue: 'cod_dest_value',
  /** calling number to present on a PSTN destination leg */
  destCallingNumber: 'cod_dest_calling_number',
  /** end_user as percent-encoded JSON (free text never travels raw). */
  endUser: 'cod_end_user',
  /** "true" when SIP auto-answer headers were requested */
  autoAnswer: 'cod_auto_answer',
  /**
   * The recording of this call (a UUID the daemon made, src/recording/id.ts): on the answered
   * leg, the dialplan arms FreeSWITCH's record_session on `<recording.dir>/<domain>/<id>.wav`
   * (src/xmlcurl/recording.ts, docs/recording.md "How FreeSWITCH records").
   */
  recordingId: 'cod_recording_id',
  /**
   * `api` on a leg the daemon's call control hung up (an HTTP call command or a CTI hangup): set
   * with uuid_setvar just before its uuid_kill (cti/esl.ts), so that the leg's hangup events say
   * so and its status event's `hangup_by` is `api` (callbacks/status-events.ts).
   */
  hangupBy: 'cod_hangup_by',
} as const

/** The API operation that placed a leg: the values of `cod_operation`. */
export type Operation = 'call_user' | 'call_group' | 'call_external' | 'initiate_call'

/** The dialplan extension an originated leg runs once answered (context = domain name). */
export const ROUTE_EXTENSION = 'cod_route'
