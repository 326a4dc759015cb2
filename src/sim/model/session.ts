/**
 * A channel plus what runs on it: the "session thread" (dialplan extension, park, bridge), the
 * private event queue that sendmsg feeds, the far end's timers and the hooks other parts use
 * to follow it (originate race, bridge).
 */
import type { TimerHandle } from './clock.js'
import { SimChannel, type CallerProfile, type Direction } from './channel.js'

export interface QueuedApp {
  readonly name: string
  readonly arg: string
}

/** What the session thread does next (FreeSWITCH's next state). */
export type NextStep =
  /** CS_EXECUTE with these applications (originate `&app(arg)`, or a dialplan extension). */
  | { readonly kind: 'execute'; readonly apps: readonly QueuedApp[] }
  /** CS_ROUTING: hunt the dialplan for the caller profile's destination and context. */
  | { readonly kind: 'route' }
  /** CS_PARK (uuid_park, park_after_bridge). */
  | { readonly kind: 'park' }
  /** uuid_bridge originator: CS_SOFT_EXECUTE, bridged to the partner. */
  | { readonly kind: 'soft-bridge'; readonly bridge: Bridge }
  /** uuid_bridge originatee: CS_EXCHANGE_MEDIA until the bridge ends. */
  | { readonly kind: 'exchange'; readonly bridge: Bridge }

export interface BridgeEnd {
  /** The leg whose hangup or transfer ended the bridge. */
  readonly by: 'a' | 'b'
  readonly cause: string
}

/**
 * Two bridged legs: `a` carries CHANNEL_BRIDGE/UNBRIDGE
 * (test/fixtures/freeswitch/esl/18-uuid-bridge.txt and 19-originate-xml-default.txt: one event, on
 * A).
 */
export class Bridge {
  ended = false
  readonly done: Promise<BridgeEnd>
  private resolveDone!: (e: BridgeEnd) => void

  constructor(
    readonly a: Session,
    readonly b: Session,
    /** true for the bridge application (dialplan), false for uuid_bridge. */
    readonly viaApp: boolean,
  ) {
    this.done = new Promise((r) => (this.resolveDone = r))
  }

  finish(end: BridgeEnd): void {
    if (this.ended) return
    this.ended = true
    this.resolveDone(end)
  }
}

export type SessionHook = (s: Session) => void

/**
 * A media bug on a channel (switch_core_media_bug.c), as far as the simulator has them: what
 * record_session attaches (apps/record-session.ts). The core tells it when the channel is
 * bridged and closes it when the channel's media ends.
 */
export interface MediaBug {
  /** CF_BRIDGED was set (CHANNEL_BRIDGE) or cleared (CHANNEL_UNBRIDGE) on the channel. */
  bridged(on: boolean): void
  /** CS_HANGUP (switch_core_media_bug_remove_all): the bug closes, before CHANNEL_HANGUP_COMPLETE. */
  close(): Promise<void>
}

export class Session extends SimChannel {
  next?: NextStep
  threadRunning = false
  /** Every running application, including sendmsg ones: all end on hangup or a state change. */
  readonly appAborts = new Set<AbortController>()
  currentApp?: QueuedApp
  bridge?: Bridge
  readonly messages: Array<() => Promise<void>> = []
  messagesRunning = false
  readonly farEndTimers: TimerHandle[] = []
  readonly scheduled: TimerHandle[] = []
  readonly hangupHooks: SessionHook[] = []
  readonly reportedHooks: SessionHook[] = []
  readonly answerHooks: SessionHook[] = []
  readonly progressHooks: SessionHook[] = []
  readonly dtmfWaiters = new Set<() => void>()
  /** Attached media bugs (record_session), closed at the hangup. */
  readonly mediaBugs: MediaBug[] = []
  /**
   * CHANNEL_HANGUP_COMPLETE waits for this (an originator waits for its bridged leg,
   * test/fixtures/freeswitch/esl/18-uuid-bridge.txt).
   */
  finalizeGate?: Promise<void>
  readonly destroyedPromise: Promise<void>
  resolveDestroyed!: () => void
  /** Made by the originate API without a calling session: caller id is flipped on answer. */
  originatedByApi = false
  /** The first caller profile (initial_* columns of `show channels`). */
  readonly initialProfile: CallerProfile

  constructor(init: ConstructorParameters<typeof SimChannel>[0]) {
    super(init)
    this.destroyedPromise = new Promise((r) => (this.resolveDestroyed = r))
    this.initialProfile = { ...this.profile }
  }

  static outbound(uuid: string, name: string, profile: ConstructorParameters<typeof SimChannel>[0]['profile']): Session {
    return new Session({ uuid, name, direction: 'outbound' as Direction, profile })
  }
}
