/**
 * Hangup causes as FreeSWITCH names and numbers them (switch_channel.c CAUSE_CHART,
 * switch_types.h switch_call_cause_t, v1.10.12).
 */
const CAUSES: Readonly<Record<string, number>> = {
  NONE: 0,
  UNALLOCATED_NUMBER: 1,
  NO_ROUTE_TRANSIT_NET: 2,
  NO_ROUTE_DESTINATION: 3,
  CHANNEL_UNACCEPTABLE: 6,
  CALL_AWARDED_DELIVERED: 7,
  NORMAL_CLEARING: 16,
  USER_BUSY: 17,
  NO_USER_RESPONSE: 18,
  NO_ANSWER: 19,
  SUBSCRIBER_ABSENT: 20,
  CALL_REJECTED: 21,
  NUMBER_CHANGED: 22,
  REDIRECTION_TO_NEW_DESTINATION: 23,
  EXCHANGE_ROUTING_ERROR: 25,
  DESTINATION_OUT_OF_ORDER: 27,
  INVALID_NUMBER_FORMAT: 28,
  FACILITY_REJECTED: 29,
  RESPONSE_TO_STATUS_ENQUIRY: 30,
  NORMAL_UNSPECIFIED: 31,
  NORMAL_CIRCUIT_CONGESTION: 34,
  NETWORK_OUT_OF_ORDER: 38,
  NORMAL_TEMPORARY_FAILURE: 41,
  SWITCH_CONGESTION: 42,
  ACCESS_INFO_DISCARDED: 43,
  REQUESTED_CHAN_UNAVAIL: 44,
  PRE_EMPTED: 45,
  FACILITY_NOT_SUBSCRIBED: 50,
  OUTGOING_CALL_BARRED: 52,
  INCOMING_CALL_BARRED: 54,
  BEARERCAPABILITY_NOTAUTH: 57,
  BEARERCAPABILITY_NOTAVAIL: 58,
  SERVICE_UNAVAILABLE: 63,
  BEARERCAPABILITY_NOTIMPL: 65,
  CHAN_NOT_IMPLEMENTED: 66,
  FACILITY_NOT_IMPLEMENTED: 69,
  SERVICE_NOT_IMPLEMENTED: 79,
  INVALID_CALL_REFERENCE: 81,
  INCOMPATIBLE_DESTINATION: 88,
  INVALID_MSG_UNSPECIFIED: 95,
  MANDATORY_IE_MISSING: 96,
  MESSAGE_TYPE_NONEXIST: 97,
  WRONG_MESSAGE: 98,
  IE_NONEXIST: 99,
  INVALID_IE_CONTENTS: 100,
  WRONG_CALL_STATE: 101,
  RECOVERY_ON_TIMER_EXPIRE: 102,
  MANDATORY_IE_LENGTH_ERROR: 103,
  PROTOCOL_ERROR: 111,
  INTERWORKING: 127,
  SUCCESS: 142,
  ORIGINATOR_CANCEL: 487,
  CRASH: 700,
  SYSTEM_SHUTDOWN: 701,
  LOSE_RACE: 702,
  MANAGER_REQUEST: 703,
  BLIND_TRANSFER: 800,
  ATTENDED_TRANSFER: 801,
  ALLOTTED_TIMEOUT: 802,
  USER_CHALLENGE: 803,
  MEDIA_TIMEOUT: 804,
  PICKED_OFF: 805,
  USER_NOT_REGISTERED: 806,
  PROGRESS_TIMEOUT: 807,
  INVALID_GATEWAY: 808,
  GATEWAY_DOWN: 809,
  INVALID_URL: 810,
  INVALID_PROFILE: 811,
  NO_PICKUP: 812,
  SRTP_READ_ERROR: 813,
  BOWOUT: 814,
  BUSY_EVERYWHERE: 815,
  DECLINE: 816,
  DOES_NOT_EXIST_ANYWHERE: 817,
  NOT_ACCEPTABLE: 818,
  UNWANTED: 819,
  NO_IDENTITY: 820,
  BAD_IDENTITY_INFO: 821,
  UNSUPPORTED_CERTIFICATE: 822,
  INVALID_IDENTITY: 823,
  STALE_DATE: 824,
  REJECT_ALL: 825,
}

const BY_NUMBER = new Map<number, string>(Object.entries(CAUSES).map(([name, n]) => [n, name]))

/**
 * switch_channel_str2cause: a known name (any case), or digits read as a number; anything
 * else is NORMAL_CLEARING (the function's default). Returns the canonical name.
 */
export function str2cause(text: string | undefined): string {
  if (text === undefined || text === '') return 'NORMAL_CLEARING'
  const c = text.charCodeAt(0)
  if (c > 47 && c < 58) {
    const n = parseInt(text, 10)
    return BY_NUMBER.get(n) ?? 'NORMAL_CLEARING'
  }
  const upper = text.toUpperCase()
  return upper in CAUSES ? upper : 'NORMAL_CLEARING'
}

export const causeNumber = (cause: string): number => CAUSES[cause] ?? 16

/** switch_channel_cause_q850: causes above INTERWORKING (127) report 16. */
export const causeQ850 = (cause: string): number => {
  const n = causeNumber(cause)
  return n <= 127 ? n : 16
}

/** SIP final responses the simulated far ends send, with the phrase and the cause FreeSWITCH maps them to. */
export const SIP_REFUSALS = {
  busy: { status: 486, phrase: 'Busy Here', cause: 'USER_BUSY' },
  reject: { status: 603, phrase: 'Decline', cause: 'CALL_REJECTED' },
  unavailable: { status: 480, phrase: 'Temporarily Unavailable', cause: 'NO_USER_RESPONSE' },
  /**
   * A contact nobody answers on (test/fixtures/freeswitch/esl/22-misc-replies.txt: dead port → 503,
   * recv_refuse).
   */
  deadContact: { status: 503, phrase: 'Service Unavailable', cause: 'NORMAL_TEMPORARY_FAILURE' },
} as const
