/**
 * The form parameters sent with every IVR fetch (docs/ivr.md "Fetching"), built from a plain
 * description of the call that the IVR runner keeps up to date.
 *
 * Always sent: CallUUID, CallStatus, Direction, CalledNumber, CallingNumber, CallerName,
 * DomainName, Anonymous, StartTime, AnswerTime (unknown strings are sent empty, unknown times as
 * "0" — FreeSWITCH's own value for "not yet", e.g. `Caller-Channel-Answered-Time: 0` on an
 * unanswered leg in test/fixtures/freeswitch/esl/11-busy-486.txt).
 * Sent when known: UserId, UserName, GroupId, GroupName, Digits (after GetDigits, even empty),
 * TransferFailureReason (after a failed Transfer), the results of Record and GetInput,
 * Error (with CallStatus=error).
 * Then `var_<name>` for every variable set with `<Set>`.
 */

export type CallStatus = 'ringing' | 'in-progress' | 'completed' | 'error'
export type CallDirection = 'inbound' | 'outbound'

/** Microseconds since the Unix epoch, as FreeSWITCH reports times (a number, bigint or digit string). */
export type Microseconds = number | bigint | string

export interface CallDescription {
  /** The channel UUID the IVR runs on. */
  readonly uuid: string
  readonly status: CallStatus
  readonly direction: CallDirection
  /** The number that was called (the IVR's destination). */
  readonly calledNumber?: string
  /** The number presented by the caller. */
  readonly callingNumber?: string
  readonly callerName?: string
  /** The daemon domain the call belongs to. */
  readonly domainName: string
  /** The caller withheld their number (privacy). */
  readonly anonymous?: boolean
  /** Channel creation time (µs). */
  readonly startTime?: Microseconds
  /** Answer time (µs); absent or 0 while not answered. */
  readonly answerTime?: Microseconds
  /** The directory user the call is about, when known. */
  readonly user?: { readonly id?: string; readonly name?: string }
  /** The directory group the call is made for, when known. */
  readonly group?: { readonly id?: string; readonly name?: string }
  /** Digits collected by the last GetDigits (set, possibly '', once GetDigits ran). */
  readonly digits?: string
  /** After a failed Transfer: busy, no_answer, rejected, not_registered or failed. */
  readonly transferFailureReason?: string
  /**
   * What the last Record or GetInput gave (RecordingId, RecordingUrl, RecordingDuration;
   * InputType, Speech, Confidence), sent under those names (src/ivr/elements/record.ts, get-input.ts).
   */
  readonly results?: Readonly<Record<string, string>>
  /** The reason of a failure, sent with CallStatus=error. */
  readonly error?: string
  /** Variables set with `<Set>`, sent as var_<name>; non-strings as JSON. */
  readonly variables?: Readonly<Record<string, unknown>>
}

const micros = (t: Microseconds | undefined): string => {
  if (t === undefined) return '0'
  if (typeof t === 'bigint') return t.toString()
  if (typeof t === 'number') return Number.isFinite(t) && t > 0 ? Math.trunc(t).toString() : '0'
  return /^\d+$/.test(t) ? t : '0'
}

/**
 * A variable's value as a form value: strings as they are, everything else as JSON.
 * @internal Exported for tests: test/ivr/fetch checks each value form.
 */
export const stringifyVariable = (value: unknown): string => {
  if (typeof value === 'string') return value
  if (typeof value === 'bigint') return value.toString()
  if (value === undefined) return ''
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    // Cycles cannot come from JSON or expressions; never let one break a fetch.
    return ''
  }
}

/** The form parameters for a fetch, in the order of docs/ivr.md "Fetching". */
export const buildCallParams = (call: CallDescription): Record<string, string> => {
  const p: Record<string, string> = {
    CallUUID: call.uuid,
    CallStatus: call.status,
    Direction: call.direction,
    CalledNumber: call.calledNumber ?? '',
    CallingNumber: call.callingNumber ?? '',
    CallerName: call.callerName ?? '',
    DomainName: call.domainName,
    Anonymous: call.anonymous === true ? 'true' : 'false',
    StartTime: micros(call.startTime),
    AnswerTime: micros(call.answerTime),
  }
  if (call.user?.id !== undefined) p.UserId = call.user.id
  if (call.user?.name !== undefined) p.UserName = call.user.name
  if (call.group?.id !== undefined) p.GroupId = call.group.id
  if (call.group?.name !== undefined) p.GroupName = call.group.name
  if (call.digits !== undefined) p.Digits = call.digits
  if (call.transferFailureReason !== undefined) p.TransferFailureReason = call.transferFailureReason
  for (const [name, value] of Object.entries(call.results ?? {})) p[name] = value
  if (call.error !== undefined) p.Error = call.error
  for (const [name, value] of Object.entries(call.variables ?? {})) p[`var_${name}`] = stringifyVariable(value)
  return p
}
