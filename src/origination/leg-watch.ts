/**
 * The engine's only window on the channel model (src/channels): it follows the legs of the
 * originates in flight and tells each attempt what happened to its legs, in the model-free
 * terms of leg-outcome.ts. Everything the engine reads from the model's changes goes through
 * here (plus the live count the channel limit reads, wired in engine.ts).
 *
 * It also remembers, for a while, the losing legs of attempts already over: should FreeSWITCH still
 * create one (e.g. an originate FreeSWITCH ran after we gave up waiting on it), a loser is cancelled.
 */
import type { ChannelChange, ChannelModel } from '../channels/index.js'
import type { Clock } from '../util/clock.js'
import { RecentIds } from '../util/recent-ids.js'
import type { LegEvent } from './leg-outcome.js'

/**
 * How long a losing leg's uuid is remembered, to cancel it should FreeSWITCH still create it: an
 * originate creates its leg as soon as it runs, so this covers a switch minutes behind its queue.
 */
const RETIRED_TTL_MS = 5 * 60 * 1000
/** ...and at most this many (a burst of losers). */
const RETIRED_MAX = 100_000

export interface LegWatchHandlers<A> {
  /** A change of a watched leg. */
  onLeg(attempt: A, uuid: string, e: LegEvent): void
  /** A re-read of the live channels that began at `startedAt` (the channel model's performance.now()) completed. */
  onResynced(attempt: A, startedAt: number): void
  /** Hangs up a leg of an attempt already over that FreeSWITCH created after all. */
  cancel(uuid: string): void
}

export interface LegWatch<A> {
  /** Reports this leg's changes to `attempt` until it is retired. */
  watch(uuid: string, attempt: A): void
  /** Stops watching the leg; a late loser (`winner` false) is cancelled if it appears. */
  retire(uuid: string, winner: boolean): void
  /** The channel model knows the channel and it has not hung up. */
  isLive(uuid: string): boolean
  /** Re-reads the live channels (when the job result of an attempt is lost). */
  resync(): void
  close(): void
}

/** The model's change as a leg event; undefined for the changes an attempt does not need. */
const legEventOf = (ch: ChannelChange): LegEvent | undefined => {
  switch (ch.kind) {
    case 'created':
      return { kind: 'created', live: ch.channel.state !== 'hangup', answered: ch.channel.answered }
    case 'answered':
      return { kind: 'answered', live: ch.channel.state !== 'hangup' }
    case 'hangup':
    case 'destroyed':
      return { kind: 'ended', cause: ch.channel.hangupCause }
    default:
      return undefined
  }
}

export function createLegWatch<A>(channels: ChannelModel, clock: Clock, handlers: LegWatchHandlers<A>): LegWatch<A> {
  const attemptOf = new Map<string, A>()
  /** Losers' uuids, by when they were retired (clock ms). */
  const retired = new RecentIds(RETIRED_TTL_MS, RETIRED_MAX)

  const unsubChange = channels.onChange((ch) => {
    const uuid = ch.channel.uuid
    const a = attemptOf.get(uuid)
    if (a === undefined) {
      // A losing leg of an attempt already over (e.g. an originate FreeSWITCH ran after we gave up waiting on it).
      if (retired.has(uuid) && ch.channel.state !== 'hangup' && (ch.kind === 'created' || ch.kind === 'answered')) {
        handlers.cancel(uuid)
      }
      return
    }
    const e = legEventOf(ch)
    if (e !== undefined) handlers.onLeg(a, uuid, e)
  })
  const unsubResync = channels.onResynced((startedAt) => {
    for (const a of new Set(attemptOf.values())) handlers.onResynced(a, startedAt)
  })

  return {
    watch(uuid, attempt) {
      attemptOf.set(uuid, attempt)
    },
    retire(uuid, winner) {
      attemptOf.delete(uuid)
      // Only a loser needs remembering (a winner appearing late is left alone): most legs win, and
      // every leg kept for 10 minutes was one of the sets behind the soak's heap growth (docs/bench.md).
      if (winner) retired.forget(uuid)
      else retired.add(uuid, clock.now())
    },
    isLive(uuid) {
      const ch = channels.get(uuid)
      return ch !== undefined && ch.state !== 'hangup'
    },
    resync() {
      void channels.resync()
    },
    close() {
      unsubChange()
      unsubResync()
    },
  }
}
