/**
 * The seam between the API and the PBX: the API validates and resolves a request into an
 * OriginationPlan and hands it to an OriginationEngine. Nothing in a plan is unchecked client
 * text: identifiers are directory records, numbers matched the PSTN pattern, end_user
 * fields are free text that must never be written into an ESL command or document unescaped.
 */
import type { GroupStrategy } from '../config/schema.js'
import type { Extension, Group, User } from '../directory/directory.js'
import type { IvrSource } from '../ivr/source.js'
import type { Operation } from '../pbx/channel-vars.js'
import type { EndUser } from '../pbx/end-user.js'
import type { Result } from '../util/result.js'
import type { OriginationRefusal } from './refusal.js'

/** The status events a request may ask for, in the order a call goes through them. */
export const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'bridged', 'completed'] as const
export type StatusEventName = (typeof STATUS_EVENTS)[number]

/** The operation of a plan (the API's four), stamped on its legs as `cod_operation`. */
export type { Operation }

/** What the answered originating leg is connected to. */
export type Destination =
  | { readonly kind: 'user'; readonly user: User }
  | { readonly kind: 'group'; readonly group: Group }
  /** A configured extension of the domain (bound to an XML IVR URL). */
  | { readonly kind: 'extension'; readonly extension: Extension }
  | { readonly kind: 'pstn'; readonly number: string; readonly callingNumber?: string; readonly endUser?: EndUser }
  | { readonly kind: 'ivr'; readonly source: IvrSource }

/** Who the originating leg(s) ring. */
export type Originator =
  /** All registered terminals of the user, rung together. */
  | { readonly kind: 'user'; readonly user: User; readonly autoAnswer: boolean }
  /**
   * The group's members: hunted in order, one member (all its terminals) at a time, or with
   * `strategy` ring_all every terminal of every member at once (issue 31, ring-all.ts).
   */
  | {
      readonly kind: 'group'
      readonly group: Group
      readonly members: readonly User[]
      /** One member's turn in a hunt; ring_all has no turns and does not use it. */
      readonly memberAnswerTimeoutSec: number
      /** Absent: hunt (the API always says; plans built before issue 31 did not). */
      readonly strategy?: GroupStrategy
    }
  /** One leg through the domain's gateway. */
  | { readonly kind: 'pstn'; readonly number: string; readonly callingNumber?: string; readonly endUser?: EndUser }

export interface OriginationPlan {
  /** Our id of this request; stamped on every leg (channel variable) and used to cancel losers. */
  readonly requestId: string
  readonly domain: string
  readonly operation: Operation
  readonly originator: Originator
  readonly destination: Destination
  /** Whole attempt (hunt) bound, seconds. */
  readonly answerTimeoutSec: number
  readonly callbackUrl?: string
  /** Shown on the terminals of the originating leg (printable ASCII, validated by the API). */
  readonly callingName?: string
  /** Group the call is made for (call_user group_*, initiate_call group_name). */
  readonly groupContext?: Group
  /** end_user of the PSTN party (target or destination), for CTI and channel variables. */
  readonly endUser?: EndUser
  /**
   * Issue 28: this call is recorded (the API asked the policy, src/recording/policy.ts). `id` is a
   * fresh UUID, the recording's name on disk (src/recording/store.ts); `callbackUrl`, where the
   * finished recording's record is POSTed (the request's recording_callback_url, else the
   * domain's recording.callback_url); `retentionDays`, how long it is kept (the policy's).
   */
  readonly recording?: { readonly id: string; readonly callbackUrl?: string; readonly retentionDays?: number }
  /**
   * Issue 29: seconds the call may last once the originating leg answered (the request's
   * time_limit, else the domain's max_call_seconds); FreeSWITCH hangs that leg up ALLOTTED_TIMEOUT.
   */
  readonly timeLimitSec?: number
  /** Issue 29: DTMF sent to the originating leg right after it answers (`0-9*#A-DwW`, 1 to 64). */
  readonly sendDigits?: string
  /**
   * Issue 29: where the call's status events go (status_callback_url) and which of them
   * (status_events; all when the request did not say): src/callbacks/status-events.ts.
   */
  readonly status?: { readonly url: string; readonly events: readonly StatusEventName[] }
  /**
   * Issue 31: how long the request may wait for its channels when they do not fit under the
   * domain's limit (wait_ms; 0 or absent: refused at once): origination/channel-wait.ts.
   */
  readonly waitMs?: number
  /** The request's Idempotency-Key and body digest, kept with its intent (intents.ts) so a crash keeps the key. */
  readonly idempotency?: { readonly key: string; readonly bodyDigest: string }
}

export interface OriginationAccepted {
  /** One UUID per originating leg that may be created, in the order legs are tried. */
  readonly uuids: readonly string[]
}

export interface OriginateOptions {
  /** The client went away: a request still waiting for a channel gives up, nothing placed. */
  readonly clientGone?: AbortSignal
}

export interface OriginationEngine {
  /**
   * Places the call. Resolves once FreeSWITCH accepted the originate (docs/design.md "HTTP API
   * decisions", When the reply is sent); the outcome of the attempt goes to the callback. A request not placed
   * is refused with its reason (refusal.ts), as a value.
   */
  originate(plan: OriginationPlan, opts?: OriginateOptions): Promise<Result<OriginationAccepted, OriginationRefusal>>
}
