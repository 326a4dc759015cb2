/**
 * The live-channel model's vocabulary: what one channel record holds, the states it goes
 * through, and the changes the model publishes. Origination (leg watching, the channel limit)
 * and CTI read these records; none of them keeps channel state of its own.
 *
 * A record is a plain object of plain fields (no closures, no per-channel maps): the model
 * holds one per live channel, and there may be tens of thousands of them.
 */
import type { EndUser } from '../pbx/end-user.js'
import type { FsEvent } from '../pbx/types.js'

/**
 * What a channel is doing. `calling` until FreeSWITCH reports progress, `ringing` until it
 * answers; then `answered`, `bridged` (connected to another leg), `park` or `ivr` (an answered
 * originated leg whose destination is an IVR document or an extension). `hangup` is final.
 */
export type ChannelState = 'calling' | 'ringing' | 'answered' | 'bridged' | 'park' | 'ivr' | 'hangup'

export type CallDirection = 'inbound' | 'outbound'

/** One live channel as the model knows it. Only the model writes it. */
export interface ChannelRecord {
  readonly uuid: string
  /**
   * Lower-case domain: `cod_domain`, else the first domain the SIP variables name (only a
   * configured one when the model has a directory). Set once, never changed.
   */
  readonly domain: string | undefined
  readonly state: ChannelState
  /** Epoch ms at which `state` began (FreeSWITCH's event time). */
  readonly stateAt: number
  /** Whether the channel was ever answered (also when seen answered only by a re-read). */
  readonly answered: boolean
  /** Epoch ms of the channel's creation. */
  readonly offerAt: number
  readonly answerAt: number | undefined
  readonly hangupAt: number | undefined
  readonly hangupCause: string | undefined
  readonly direction: CallDirection | undefined
  readonly callingName: string | undefined
  readonly callingNumber: string | undefined
  readonly calledNumber: string | undefined
  /** The leg this one is bridged to, or being originated by. */
  readonly otherUuid: string | undefined
  /** cod_request_id: the API request that created this leg (or the leg that originated it). */
  readonly requestId: string | undefined
  /** cod_operation, handed down like the request id. */
  readonly operation: string | undefined
  /** cod_role: `originator` on our originated legs, `destination` on dialplan legs. */
  readonly role: string | undefined
  /** The user whose terminal this is: cod_user_id, else the SIP identity of its first event. */
  readonly userId: string | undefined
  /** Reached through a SIP gateway (`variable_sip_gateway_name`). */
  readonly gateway: boolean
  /** cod_end_user, decoded. */
  readonly endUser: EndUser | undefined
  /** The end_user of a leg this one was connected to (shown when it has none of its own). */
  readonly peerEndUser: EndUser | undefined
  /** Users party to this channel: its own user and those of the legs it was connected to. Only grows. */
  readonly parties: readonly string[]
  /** Legs this one was connected to (both directions), for relaying parties and end_user. */
  readonly peers: readonly string[]
  /** Every `cod_*` variable seen on the channel (without the `variable_` prefix). */
  readonly vars: Readonly<Record<string, string>>
  /** The model's event counter when this channel was last heard of (a re-read yields to newer events). */
  readonly seenSeq: number
}

/**
 * Why a change was published: the FreeSWITCH event that caused it, or for a channel other
 * than the event's own one, `relayed` (a linked leg's user, end_user or request reached it).
 * `destroyed` is the last change of a channel: the model forgets it.
 */
export type ChangeKind =
  | 'created'
  | 'progress'
  | 'answered'
  | 'bridged'
  | 'unbridged'
  | 'parked'
  | 'execute_complete'
  | 'dtmf'
  | 'hangup'
  | 'relayed'
  | 'destroyed'

export interface ChannelChange {
  readonly kind: ChangeKind
  /** The record itself (not a copy): read it when the change is delivered. */
  readonly channel: ChannelRecord
  /** The FreeSWITCH event (absent for changes made by a re-read or a sweep). */
  readonly event?: FsEvent
  /** Made by the re-read of the live channels after a (re)connection. */
  readonly resync?: boolean
}

/**
 * The part of the directory the model reads: which domains exist (a channel is placed only in
 * a configured domain) and which user a SIP name is. src/directory's Directory has this shape.
 */
export interface ChannelDirectory {
  domain(name: string): { readonly name: string; userBySipName(sipName: string): { readonly id: string } | undefined } | undefined
}
