/**
 * A request as the result journal keeps it for recovery (journal/types.ts AcceptedRequest and
 * OriginateIntent): what recovery.ts needs to find its legs and report its result. Its own module
 * because the intent written before an originate (intents.ts, used by attempt.ts) is the same
 * record, and recovery.ts sits above attempt.ts.
 */
export interface RecoverableRequest {
  readonly requestId: string
  readonly domain: string
  readonly operation: string
  readonly uuids: readonly string[]
  readonly callbackUrl?: string
  /** Unix ms by which the attempt is over at the latest (FreeSWITCH ends ringing legs itself by then). */
  readonly answerDeadlineAt: number
}
