/**
 * The result journal's public interface (issue 11 items 1 and 3; docs/callbacks.md "Durability").
 *
 * Why it exists: an accepted request and its final result must survive a crash of the daemon
 * (SIGKILL, power loss), so that the result is delivered after the restart with its original
 * delivery id and body bytes, and so that recovery can find the requests whose calls were still
 * running. Everything here is a promise kept across processes: a record whose append promise
 * resolved is on disk (fsynced, group commit) and comes back from replay() at the next start.
 *
 * Who writes what:
 * - the API, before it replies 200: `accepted` (with the idempotency fields when the request
 *   carried an Idempotency-Key);
 * - the engine's outcome listener, for a request without callback_url: `ended`;
 * - the callback dispatcher: `result` before the first attempt, `attempted` after each failed
 *   one, `acked` after a 2xx, `deadLetter` when it gives up, `revived` when an operator sends a
 *   dead letter again.
 *
 * The append methods never reject: a write that fails is logged at error level by the journal
 * and counted in stats().writeErrors (the caller could do nothing better: the call is already
 * placed, the result already known). They resolve once the record is durable (or failed).
 */

/** Idempotency data kept with an accepted request for 24 h (helper R2's Idempotency-Key). */
export interface IdempotencyFields {
  /** The client's Idempotency-Key header, as received (scoped per domain). */
  readonly key: string
  /** A digest of the request body (e.g. hex SHA-256), to tell "same body" from "another body". */
  readonly bodyDigest: string
  /** The exact reply body bytes sent with the 200, returned again for a repeat. */
  readonly reply: string
}

/** A request the API is about to answer 200 (FreeSWITCH accepted its originate). */
export interface AcceptedRequest {
  readonly requestId: string
  /** The domain's name as configured (case kept). */
  readonly domain: string
  /** call_user, call_group, call_external or initiate_call. */
  readonly operation: string
  /** Every originating leg's UUID, as in the reply. */
  readonly uuids: readonly string[]
  /** Where the final result goes; undefined: no callback (CTI only). */
  readonly callbackUrl?: string
  /** Unix ms by which the attempt (answer_timeout, the whole hunt) is over at the latest. */
  readonly answerDeadlineAt: number
  readonly idempotency?: IdempotencyFields
  /** Where its status events go and which (status_callback_url, status_events): followed across a restart. */
  readonly status?: StatusSubscription
}

/** A request's status_callback_url and the events it asked for (callbacks/status-events.ts). */
export interface StatusSubscription {
  readonly url: string
  readonly events: readonly string[]
}

/**
 * How far a request's status events had gone when the journal was read (callbacks/status-events.ts
 * takes them up after a restart): the subscription of its `accepted`, and the leg and event of
 * each status notice handed over since, in sequence order. Kept until the follower writes
 * `followed` (every leg completed), or for FOLLOWING_TTL_MS.
 */
export interface StatusFollowing {
  readonly requestId: string
  readonly domain: string
  readonly status: StatusSubscription
  /** The originating legs the reply listed. */
  readonly origin: readonly string[]
  /** The last sequence number handed over (0: none yet). */
  readonly sequence: number
  /** Each event handed over, as `<uuid> <event>`, in order. */
  readonly sent: readonly string[]
}

/** How long a request's status progress is kept without its `followed` (a call longer than this is not taken up after a restart). */
export const FOLLOWING_TTL_MS = 48 * 60 * 60 * 1000

/**
 * A request about to be originated, durable before FreeSWITCH sees the originate (the write-ahead
 * record of docs/callbacks.md "Durability"). Without it, a crash between FreeSWITCH accepting the
 * originate and the `accepted` record's fsync would leave a call running that no record names:
 * its result lost, and a client retrying with its Idempotency-Key would get a second call. At the
 * next start an intent with neither `accepted` nor `unplaced` is settled by recovery: legs of it
 * found in FreeSWITCH make it accepted (result delivered, the key answers the 200 it would have
 * had); none found, it was never placed.
 */
export type OriginateIntent = Omit<AcceptedRequest, 'uuids' | 'idempotency'> & {
  /** The UUIDs of its first originate (all a crash can leave behind before the reply). */
  readonly uuids: readonly string[]
  /** Its Idempotency-Key and body digest; the reply is not known yet. */
  readonly idempotency?: Omit<IdempotencyFields, 'reply'>
}

/**
 * What makes a delivery a notice rather than its request's final result: a status event, a
 * finished recording, a ticketing event. A request has one result and may have many notices; a
 * notice does not end its request (recovery still looks for its calls) and is not mirrored to a
 * cluster's peers (docs/cluster.md: a dead node's pending notices wait for its restart).
 */
export interface NoticeFields {
  /** What it tells (also sent as the X-Cod-Notice header). */
  readonly kind: 'status' | 'recording' | 'ticket'
  /**
   * Whose secret signs it: absent, the domain's callback_secret; `ticket:<group name>`, the
   * ticket_webhook secret of that group (read at each attempt, so a reload applies).
   */
  readonly signer?: string
  /** Notices of one key are delivered one at a time, in `seq` order (a request's status events). */
  readonly order?: { readonly key: string; readonly seq: number }
  /** A status event: the leg it tells of, the event and its sequence (the request's progress, StatusFollowing). */
  readonly status?: { readonly uuid: string; readonly event: string; readonly sequence: number }
}

/** A final result (or a notice) on its way to a callback_url: fixed once, re-sent byte for byte. */
export interface ResultRecord {
  /** The X-Delivery-Id of every attempt, also after a restart. */
  readonly deliveryId: string
  readonly requestId: string
  readonly domain: string
  /** The callback_url (may hold user information: the journal file is mode 0600). */
  readonly url: string
  /** The exact body bytes every attempt sends and signs. */
  readonly body: string
  /** Unix ms the result was handed over (the give-up window counts from here). */
  readonly createdAt: number
  /** Present: not the request's final result but a notice (NoticeFields). */
  readonly notice?: NoticeFields
}

/** Where a pending result's retry schedule stands (wall clock, so it survives restarts). */
export interface DeliveryProgress {
  /** Attempts made so far (X-Delivery-Attempt of the next one is this + 1). */
  readonly attempts: number
  /** Unix ms the next attempt is due; 0: at once. */
  readonly nextAttemptAt: number
  /**
   * nextAttemptAt is what the receiver asked for (Retry-After): kept after a restart. Otherwise a
   * restart tries the result at once (a restart is a fresh chance; the backoff then goes on).
   */
  readonly receiverAsked?: boolean
  /** Unix ms from which a failed attempt is final (createdAt + callbacks.give_up_after_ms, or a revival's). */
  readonly giveUpAt: number
}

export interface PendingResult {
  readonly result: ResultRecord
  /** undefined: no attempt was recorded yet (due at once; give-up window from createdAt). */
  readonly progress: DeliveryProgress | undefined
}

export interface DeadLetter {
  readonly result: ResultRecord
  readonly attempts: number
  /** Why the last attempt failed for good (e.g. `HTTP 404`, `connection refused ... (gave up after 24 h)`). */
  readonly reason: string
  /** Unix ms it was given up. */
  readonly deadAt: number
}

/** A live Idempotency-Key (less than 24 h old), with the request it answered. */
export interface IdempotencyEntry {
  readonly domain: string
  readonly requestId: string
  readonly fields: IdempotencyFields
  /** Unix ms of the accepted record; the key is forgotten 24 h later. */
  readonly acceptedAt: number
}

/** What the journal held at start: read once by the dispatcher, recovery and idempotency. */
export interface JournalReplay {
  /** Accepted, and neither a result nor `ended` recorded: recovery (R4) looks for their channels. */
  readonly openRequests: readonly (AcceptedRequest & { readonly acceptedAt: number })[]
  /** Intended, and neither accepted nor unplaced: recovery finds out whether they were placed. */
  readonly unsettledIntents: readonly (OriginateIntent & { readonly intendedAt: number })[]
  /** Results neither acked nor given up: the dispatcher delivers them (same id, same bytes). */
  readonly pendingResults: readonly PendingResult[]
  readonly deadLetters: readonly DeadLetter[]
  readonly idempotencyKeys: readonly IdempotencyEntry[]
  /** Requests whose status events were still being followed (absent: none). */
  readonly statusFollowing?: readonly StatusFollowing[]
}

export interface JournalStats {
  /** Records appended since start. */
  readonly appended: number
  /** fsyncs (group commits) since start: far fewer than appended under load. */
  readonly commits: number
  readonly compactions: number
  readonly writeErrors: number
  readonly openRequests: number
  readonly pendingResults: number
  readonly deadLetters: number
  /** Bytes of the active segment file. */
  readonly segmentBytes: number
}

/**
 * Whether a crash after the 200 could lose anything of an accepted request if its record were not
 * on the disk yet: a result to deliver (callback_url) or a key to answer again (Idempotency-Key).
 * Such a record is durable before the API replies. Any other request has neither: its result goes
 * to no one but the logs and CTI (which follow its channels again after a restart), so its
 * `accepted` is unhurried (group-commit.ts): it rides with the next batch, durable within 50 ms,
 * and a crash in between forgets the request as if it had ended then. The same rule spares such a
 * request its write-ahead intent (origination/intents.ts). A status_callback_url is a promise of
 * its own (every event, across a restart): such a request is urgent too. In the api benchmark, a call_user
 * without a callback, this took the durable write off every call (docs/bench.md).
 */
export function acceptedIsUrgent(rec: Pick<AcceptedRequest, 'callbackUrl' | 'idempotency' | 'status'>): boolean {
  return rec.callbackUrl !== undefined || rec.idempotency !== undefined || rec.status !== undefined
}

export interface Journal {
  /** Durable before the request's first originate is written to FreeSWITCH. */
  intended(rec: OriginateIntent): Promise<void>
  /** The intended request placed nothing (refused, or recovery found none of its legs). */
  unplaced(requestId: string): Promise<void>
  /**
   * Resolves once durable. The API waits for it before its 200 when the request has something a
   * crash could lose (acceptedIsUrgent); otherwise it is unhurried, as `ended` is.
   */
  accepted(rec: AcceptedRequest): Promise<void>
  /**
   * The request's outcome is known and it has no callback: it is no longer open. Unhurried: it
   * rides with the next batch and is durable within 50 ms, not at once (group-commit.ts; a crash
   * in between leaves the request open, and recovery ends it again).
   */
  ended(requestId: string): Promise<void>
  /**
   * Every leg of the request told its `completed` status event: its status progress is no longer
   * needed (StatusFollowing). Unhurried: a crash first leaves it to be taken up and ended again.
   */
  followed(requestId: string): Promise<void>
  /** Durable before the first delivery attempt; also ends the request. */
  result(rec: ResultRecord): Promise<void>
  /** A notice (NoticeFields), durable before its first attempt; its request stays as it was. Acked, retried and given up as results are. */
  notice(rec: ResultRecord & { readonly notice: NoticeFields }): Promise<void>
  /** After a failed attempt that will be retried: the schedule survives a restart. */
  attempted(deliveryId: string, progress: DeliveryProgress): Promise<void>
  /** After a 2xx: the result is done and forgotten at the next compaction. */
  acked(deliveryId: string): Promise<void>
  /** Given up: kept as a dead letter (listed, counted) until revived. */
  deadLetter(deliveryId: string, reason: string, attempts: number): Promise<void>
  /** An operator sends a dead letter again: pending, with a new give-up time. */
  revived(deliveryId: string, giveUpAt: number): Promise<void>

  /** The state read at open (same object on every call; not updated afterwards). */
  replay(): JournalReplay
  /** The dead letters now (including those given up since start). */
  deadLetters(): DeadLetter[]
  stats(): JournalStats
  /** Writes what is queued, fsyncs, closes the file. Appends after close are logged and dropped. */
  close(): Promise<void>
}

/** How long an Idempotency-Key is kept (issue 11 item 5). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
