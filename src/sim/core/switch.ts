/**
 * What the switch core offers the parts built on it (types only): the dialplan applications,
 * the API commands, originate and its endpoints, the dialplan and directory lookups, the ESL
 * connections. They program against `Switch`, never against the core's class, so the core does
 * not know them and they do not know how the core is put together.
 *
 * The core runs what it is given: the composition root (simulator.ts) hands it the application
 * table, the dialplan hunter and the API for `${api(args)}` when it builds it.
 */
import type { Logger } from '../../util/logger.js'
import type { HangupDisposition } from '../model/channel.js'
import type { Clock } from '../model/clock.js'
import type { EventBus } from '../model/events.js'
import type { Registry } from '../model/registry.js'
import type { SessionRate } from './session-rate.js'
import type { Bridge, NextStep, QueuedApp, Session } from '../model/session.js'
import type { XmlCurlBinding } from '../xml/curl.js'

export interface ExecutedApp {
  readonly uuid: string
  readonly app: string
  readonly arg: string
}

export interface HangupHow {
  readonly disposition?: HangupDisposition
  /** The SIP final response that ended the leg (recv_refuse) or 200 for a received BYE. */
  readonly sip?: { readonly status: number; readonly phrase: string }
}

/** The cause a bridge ended with, which A takes over when it hangs up after the bridge. */
export interface BridgeOutcome {
  readonly cause: string
}

/**
 * A dialplan application (mod_dptools.c): runs on `s` with its expanded argument until done or
 * until `signal` aborts (hangup, a state change).
 */
export type AppImpl = (sw: Switch, s: Session, arg: string, signal: AbortSignal) => Promise<void> | void

/** The applications the core can run, by name; any other name is "Invalid Application". */
export type AppTable = Readonly<Record<string, AppImpl>>

/** Runs an `inline` dialplan action at once, while the dialplan is being hunted. */
export type InlineApp = (name: string, arg: string) => Promise<void>

/**
 * CS_ROUTING: the extension's applications for the session's caller profile, or undefined when
 * there is no route (NO_ROUTE_DESTINATION).
 */
export type DialplanHunter = (sw: Switch, s: Session, inline: InlineApp) => Promise<QueuedApp[] | undefined>

/** A synchronous API command's output for `${api(args)}` ('' when there is no such command). */
export type ApiHandler = (sw: Switch, command: string, arg: string) => string

export interface Switch {
  readonly bus: EventBus
  readonly clock: Clock
  readonly registry: Registry
  readonly logger: Logger
  /** The sofia profile of channel names and contacts. */
  readonly profile: string
  readonly xmlCurl?: XmlCurlBinding
  /** Aborted by close(): ends mod_xml_curl requests still in flight. */
  readonly closing: AbortSignal
  /** Live sessions, until CHANNEL_DESTROY. */
  readonly sessions: ReadonlyMap<string, Session>
  /** FreeSWITCH's global variables (global_getvar, `$${...}`). */
  readonly globals: ReadonlyMap<string, string>
  readonly startedAt: number
  readonly sessionsSinceStartup: number
  readonly peakSessions: number
  /** sessions-per-second: every new session asks it first (session-rate.ts). */
  readonly sessionRate: SessionRate

  /** `fsctl shutdown`: the switch shuts down as FreeSWITCH does (the composition root knows how). */
  requestShutdown(): void

  newUuid(): string
  /** switch_channel_expand_variables on a session's variables (and caller profile fields). */
  expand(s: Session | undefined, text: string): string
  expandLookup(variable: (name: string) => string | undefined, text: string): string

  /** Registers a new session and fires CHANNEL_CREATE. */
  add(s: Session): void
  /** Starts the far end of a new outbound leg (ringing, answer, refusal). */
  startFarEnd(s: Session): void
  progress(s: Session): void
  preAnswer(s: Session): void
  answer(s: Session): void
  hangup(s: Session, cause: string, how?: HangupHow): void
  /** DTMF received from the far end (`RTP`), or queued by uuid_recv_dtmf (`APP`). */
  receiveDtmf(s: Session, digits: string, source?: 'RTP' | 'APP'): void
  /** uuid_hold [off]: false where FreeSWITCH refuses (already held, not held). */
  hold(s: Session, on: boolean): boolean

  /** Sets what the session does next and interrupts what it does now. */
  requestStep(s: Session, step: NextStep): void
  /** Runs one application on the session (CHANNEL_EXECUTE ... CHANNEL_EXECUTE_COMPLETE). */
  execApp(s: Session, name: string, arg: string, opts?: { appUuid?: string }): Promise<void>
  /** sendmsg: private events run one at a time, beside the session thread. */
  queueMessage(s: Session, run: () => Promise<void>): void
  /** switch_ivr_park until `signal` aborts. */
  park(s: Session, signal: AbortSignal): Promise<void>
  transfer(s: Session, destination: string, dialplan?: string, context?: string): void

  /** Links two legs as A (originator) and B (originatee). */
  linkBridge(a: Session, b: Session, viaApp: boolean): Bridge
  fireBridge(bridge: Bridge, name: 'CHANNEL_BRIDGE' | 'CHANNEL_UNBRIDGE'): void
  /** What A does once its bridge ended: hangup_after_bridge, park_after_bridge, transfer_after_bridge. */
  afterBridge(a: Session, end: BridgeOutcome, hangupByDefault: boolean): void
  /** uuid_bridge: false when the legs cannot be bridged. */
  uuidBridge(aUuid: string, bUuid: string): boolean
}
