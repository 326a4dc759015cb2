/**
 * The one model of FreeSWITCH's live channels. Created once by the daemon and handed to the
 * parts that need channels: the origination engine (its legs' fate, the channel limit's live
 * count) and CTI (what each subscriber may see). It is fed once, by the ESL events and by the
 * re-read of the live channels after every (re)connection, and publishes every change.
 *
 * Listeners get the live record, not a copy: they read it when the change is delivered.
 */
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import type { Result } from '../util/result.js'
import { createResync } from './resync.js'
import { ChannelStore } from './store.js'
import type { ChannelChange, ChannelDirectory, ChannelRecord } from './types.js'

export interface ChannelModel {
  /** Channels known, hung-up ones included until they are destroyed. */
  readonly size: number
  get(uuid: string): ChannelRecord | undefined
  /** Channels of the domain that are not hung up: what the channel limit counts. */
  liveCount(domain: string): number
  /** Live (not hung up) channels, of one domain or all. */
  liveChannels(domain?: string): ChannelRecord[]
  /** Every channel of the domain, hung-up ones included until they are destroyed. */
  ofDomain(domain: string): Iterable<ChannelRecord>
  /** The channels of the domain that the user is a party to. */
  ofUser(domain: string, userId: string): Iterable<ChannelRecord>
  /** The channels stamped with (or originated by a leg of) this request. */
  ofRequest(requestId: string): Iterable<ChannelRecord>
  /** Every change, in order; returns the unsubscribe function. */
  onChange(listener: (change: ChannelChange) => void): () => void
  /** Called after each re-read, with the performance.now() at which it began. */
  onResynced(listener: (startedAt: number) => void): () => void
  /** Re-reads FreeSWITCH's live channels; a call while one runs schedules one more after it. */
  resync(): Promise<Result<void, string>>
  close(): void
}

export interface ChannelModelDeps {
  readonly pbx: PbxClient
  readonly logger: Logger
  /** Configured domains and users (the daemon's directory); without it any domain name places a channel. */
  readonly directory?: () => ChannelDirectory
  /** Clock (epoch ms) for changes no event dates; Date.now by default. */
  readonly now?: () => number
  /** Time allowed for one ESL command of the re-read. Default 5000 ms. */
  readonly commandTimeoutMs?: number
  /** A hung-up channel whose CHANNEL_DESTROY never came is dropped after this. Default 60 s. */
  readonly staleHangupMs?: number
}

const DEFAULT_STALE_HANGUP_MS = 60_000

export function createChannelModel(deps: ChannelModelDeps): ChannelModel {
  const { pbx, logger: log } = deps
  const staleHangupMs = deps.staleHangupMs ?? DEFAULT_STALE_HANGUP_MS
  const store = new ChannelStore({
    ...(deps.directory !== undefined ? { directory: deps.directory } : {}),
    ...(deps.now !== undefined ? { now: deps.now } : {}),
  })
  const listeners = new Set<(change: ChannelChange) => void>()
  const resyncListeners = new Set<(startedAt: number) => void>()

  const publish = (changes: readonly ChannelChange[]): void => {
    for (const change of changes) {
      for (const l of listeners) {
        try {
          l(change)
        } catch (e) {
          log.error({ err: e, kind: change.kind }, 'channel listener failed')
        }
      }
    }
  }

  const resync = createResync({
    pbx,
    store,
    logger: log,
    commandTimeoutMs: deps.commandTimeoutMs ?? 5000,
    publish,
    resynced: (startedAt) => {
      for (const l of resyncListeners) {
        try {
          l(startedAt)
        } catch (e) {
          log.error({ err: e }, 'resync listener failed')
        }
      }
    },
  })

  const startResync = (): void => {
    resync()
      .then((r) => {
        if (!r.ok) log.warn({ reason: r.error }, 'channel resynchronisation failed; the channel list may be stale until the next one')
      })
      .catch((e: unknown) => log.error({ err: e }, 'channel resynchronisation crashed'))
  }

  const unsubscribeEvents = pbx.onEvent((ev) => publish(store.apply(ev)))
  const unsubscribeConnected = pbx.onConnected(startResync)
  // Connected before we subscribed: read the channels now.
  if (pbx.isConnected()) startResync()
  const sweeper = setInterval(() => publish(store.sweep(staleHangupMs)), Math.max(1000, staleHangupMs / 2))
  sweeper.unref()

  const norm = (domain: string): string => domain.toLowerCase()

  return {
    get size() {
      return store.size
    },
    get: (uuid) => store.get(uuid),
    liveCount: (domain) => store.liveCount(norm(domain)),
    liveChannels: (domain) => {
      const pool = domain === undefined ? store.all() : store.ofDomain(norm(domain))
      const out: ChannelRecord[] = []
      for (const ch of pool) if (ch.state !== 'hangup') out.push(ch)
      return out
    },
    ofDomain: (domain) => store.ofDomain(norm(domain)),
    ofUser: (domain, userId) => store.ofUser(norm(domain), userId),
    ofRequest: (requestId) => store.ofRequest(requestId),
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onResynced(listener) {
      resyncListeners.add(listener)
      return () => resyncListeners.delete(listener)
    },
    resync,
    close() {
      clearInterval(sweeper)
      unsubscribeEvents()
      unsubscribeConnected()
      listeners.clear()
      resyncListeners.clear()
    },
  }
}
