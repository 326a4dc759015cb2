/**
 * One CTI view across the nodes (docs/cluster.md "One CTI view"): the `CtiPeers` seam of
 * src/cti/peers.ts on Redis.
 *
 * Each node shares its box's channels: every change is one MULTI that writes the channel into
 * the node's hash (`ctiChannels(node)`: uuid → message, deleted when the channel ends; `~seq`:
 * the node's run and last message number) and publishes the same message on its domain's
 * channel (`ctiEvents(domain)`). At its start and after every reconnection it rewrites the whole
 * hash from its channel model and publishes a reset.
 *
 * Each node keeps a mirror of every peer's channels, so that a new subscriber's initial_info is
 * built without waiting (hub.ts). A peer's hash is read (HGETALL) when the peer is first heard
 * of, at its reset, after a message of it was missed (its numbers have a gap), and at each
 * reconnection of this node's own subscription; messages that arrive while it is read are held
 * and applied after it when they are newer than the hash. The mirror's changes are handed to the
 * hub as they happen.
 *
 * A peer whose lease expired (lease.ts) leaves the view at the next check (every CHECK_MS): its
 * channels are `removed`, and its hash deleted (a script: only while its lease is still gone).
 * This node cut off from Redis for longer than a lease: every peer's channel is `removed` (the
 * view degrades to this box's channels) and read again when Redis is back.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { CommandSource, CtiPeers, LocalCti, RemoteChange, RemoteChannel, SharedChannel } from '../cti/peers.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import { commandRelay } from './cti-commands.js'
import { channelMessage, parseViewMessage, resetMessage, type ChannelMessage, type ViewMessage } from './cti-wire.js'
import type { ClusterKeys } from './keys.js'
import { DROP_CTI_CHANNELS, runScript } from './scripts.js'

/** How often peers' leases, this node's link to Redis and its pending republication are checked. */
const CHECK_MS = 500
/** The hash field that holds `<run>:<seq>` (uuids never start with `~`). */
const SEQ_FIELD = '~seq'

export interface CtiViewDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly leaseMs: number
  readonly logger: Logger
}

export interface CtiView extends CtiPeers {
  close(): Promise<void>
}

/** What this node knows of one peer. */
interface PeerState {
  run: string
  /** Number of the last message applied. */
  seq: number
  readonly channels: Map<string, RemoteChannel>
  /** Its hash is being read: its messages wait here. */
  loading: boolean
  readonly held: ChannelMessage[]
  /** Read it again once the current read ends. */
  again: boolean
}

export function createCtiView(deps: CtiViewDeps): CtiView {
  const { conn, keys, nodeId, logger } = deps
  const run = randomUUID().slice(0, 8)
  let seq = 0
  const peers = new Map<string, PeerState>()
  const byUuid = new Map<string, RemoteChannel>()
  const byDomain = new Map<string, Set<string>>()
  /** What was last shared of each of this box's channels (parties, user, view): the same is not sent again. */
  const lastShared = new Map<string, string>()
  const relay = commandRelay({ conn, keys, nodeId, logger })
  let local: LocalCti | undefined
  let onRemote: (c: RemoteChange) => void = () => undefined
  let republish = true
  let downSince: number | undefined
  let closed = false

  // --- the mirror ---------------------------------------------------------------------------

  const put = (ch: RemoteChannel): void => {
    const before = byUuid.get(ch.uuid)
    byUuid.set(ch.uuid, ch)
    let set = byDomain.get(ch.domain)
    if (set === undefined) byDomain.set(ch.domain, (set = new Set()))
    set.add(ch.uuid)
    if (before !== undefined && before.view === ch.view && before.parties.join('\0') === ch.parties.join('\0')) return
    onRemote({ channel: ch, removed: false, unchanged: before?.view === ch.view })
  }

  /** `last`: the channel as its node ended it; otherwise (its node died, a re-read misses it) as last known. */
  const drop = (uuid: string, last?: RemoteChannel): void => {
    const ch = byUuid.get(uuid)
    if (ch === undefined) return
    byUuid.delete(uuid)
    const set = byDomain.get(ch.domain)
    set?.delete(uuid)
    if (set?.size === 0) byDomain.delete(ch.domain)
    onRemote({ channel: last ?? ch, removed: true, unchanged: false })
  }

  const apply = (state: PeerState, m: ChannelMessage): void => {
    state.seq = m.seq
    if (m.removed) {
      state.channels.delete(m.channel.uuid)
      drop(m.channel.uuid, m.channel)
    } else {
      state.channels.set(m.channel.uuid, m.channel)
      put(m.channel)
    }
  }

  const forgetPeer = (node: string): void => {
    const state = peers.get(node)
    if (state === undefined) return
    peers.delete(node)
    for (const uuid of state.channels.keys()) drop(uuid)
    if (state.channels.size > 0) logger.info({ node, channels: state.channels.size }, 'cti: a peer left the view')
  }

  const stateOf = (node: string): PeerState => {
    let state = peers.get(node)
    if (state === undefined) {
      state = { run: '', seq: -1, channels: new Map(), loading: false, held: [], again: false }
      peers.set(node, state)
    }
    return state
  }

  /** Reads a peer's whole hash and makes the mirror of it exactly that, then applies the messages held meanwhile. */
  const load = async (node: string): Promise<void> => {
    const state = stateOf(node)
    if (state.loading) {
      state.again = true
      return
    }
    state.loading = true
    let alive: boolean
    let hash: Record<string, string>
    try {
      const replies = await conn.redis.multi().exists(keys.lease(node)).hgetall(keys.ctiChannels(node)).exec()
      alive = replies?.[0]?.[1] === 1
      hash = (replies?.[1]?.[1] as Record<string, string> | undefined) ?? {}
    } catch (e) {
      logger.debug({ node, err: (e as Error).message }, 'cti: a peer could not be read; retried at the next check')
      state.loading = false
      state.held.length = 0
      state.run = '' // read again at the next check
      return
    }
    // Forgotten meanwhile (its lease expired, or Redis was lost): nothing of this read counts.
    if (closed || peers.get(node) !== state) return
    if (!alive) {
      state.loading = false
      forgetPeer(node)
      runScript(conn.redis, DROP_CTI_CHANNELS, [keys.lease(node), keys.ctiChannels(node)], []).catch(() => undefined)
      return
    }
    const [hashRun = '', hashSeq = '-1'] = (hash[SEQ_FIELD] ?? '').split(':')
    const channels = new Map<string, RemoteChannel>()
    for (const [field, text] of Object.entries(hash)) {
      if (field === SEQ_FIELD) continue
      const m = parseViewMessage(text)
      if (m?.kind === 'channel' && m.channel.node === node) channels.set(m.channel.uuid, m.channel)
    }
    for (const uuid of state.channels.keys()) if (!channels.has(uuid)) drop(uuid)
    state.channels.clear()
    for (const ch of channels.values()) {
      state.channels.set(ch.uuid, ch)
      put(ch)
    }
    state.run = hashRun
    state.seq = Number(hashSeq)
    state.loading = false
    if (state.again) {
      state.again = false
      return load(node) // the messages held wait for that read
    }
    // Held messages follow the hash in order. One of another run is of the peer's previous life
    // (or its next, whose reset follows). One still out of order after the read was not written
    // with its number (the node writes the hash before it publishes): dropped, not read again for.
    for (const m of state.held.splice(0)) {
      if (m.run !== state.run || m.seq <= state.seq) continue
      if (m.seq === state.seq + 1) apply(state, m)
      else logger.debug({ node, seq: m.seq, after: state.seq }, 'cti: a message out of order after a read was dropped')
    }
  }

  const receive = (m: ViewMessage): void => {
    const node = m.kind === 'reset' ? m.node : m.channel.node
    if (node === nodeId || closed) return
    const state = stateOf(node)
    if (m.kind === 'reset') {
      if (m.run !== state.run || m.seq > state.seq) void load(node)
      return
    }
    if (state.loading) {
      state.held.push(m)
      return
    }
    if (m.run === state.run && m.seq <= state.seq) return // already in the hash read
    if (m.run !== state.run || m.seq !== state.seq + 1) {
      // First heard of, restarted, or a message was missed: the hash says what is true.
      state.held.push(m)
      void load(node)
      return
    }
    apply(state, m)
  }

  /** Every peer alive, read again (start, and each reconnection of the subscription). */
  const loadAll = async (): Promise<void> => {
    let nodes: string[]
    try {
      nodes = Object.keys(await conn.redis.hgetall(keys.nodes))
    } catch {
      return
    }
    for (const node of new Set([...nodes, ...peers.keys()])) if (node !== nodeId) void load(node)
  }

  // --- this box's channels ------------------------------------------------------------------

  const send = (redis: Redis, ch: SharedChannel, removed: boolean): void => {
    seq += 1
    const message = channelMessage(nodeId, run, seq, ch, removed)
    const multi = redis.multi()
    if (removed) multi.hdel(keys.ctiChannels(nodeId), ch.uuid)
    else multi.hset(keys.ctiChannels(nodeId), ch.uuid, message)
    multi.hset(keys.ctiChannels(nodeId), SEQ_FIELD, `${run}:${seq}`).publish(keys.ctiEvents(ch.domain), message)
    multi.exec().catch(() => {
      // Lost: peers see a gap or nothing; the whole hash is rewritten once Redis answers.
      republish = true
    })
  }

  const share = (ch: SharedChannel, removed: boolean): void => {
    if (closed) return
    if (removed) {
      if (!lastShared.delete(ch.uuid)) return
    } else {
      const key = `${ch.parties.join('\0')}\u0001${ch.userId ?? ''}\u0001${ch.view}`
      if (lastShared.get(ch.uuid) === key) return
      lastShared.set(ch.uuid, key)
    }
    if (republish || !conn.isReady()) {
      republish = true
      return
    }
    send(conn.redis, ch, removed)
  }

  /** Rewrites this node's whole hash from its channel model and tells the peers to read it. */
  const rewrite = async (): Promise<void> => {
    if (local === undefined || !conn.isReady()) return
    republish = false
    seq += 1
    lastShared.clear()
    const hash = keys.ctiChannels(nodeId)
    const multi = conn.redis.multi().del(hash)
    let count = 0
    for (const ch of local.channels()) {
      multi.hset(hash, ch.uuid, channelMessage(nodeId, run, seq, ch, false))
      lastShared.set(ch.uuid, `${ch.parties.join('\0')}\u0001${ch.userId ?? ''}\u0001${ch.view}`)
      count += 1
    }
    multi.hset(hash, SEQ_FIELD, `${run}:${seq}`).publish(keys.ctiResets, resetMessage(nodeId, run, seq))
    try {
      await multi.exec()
      logger.debug({ channels: count }, 'cti: this box\'s channels republished')
    } catch {
      republish = true
    }
  }

  // --- the subscription ---------------------------------------------------------------------

  // A connection of its own: a subscribed connection can send nothing else.
  const sub = conn.redis.duplicate()
  sub.on('error', () => undefined) // the main connection logs Redis's outages
  sub.on('pmessage', (_pattern: string, _channel: string, text: string) => {
    const m = parseViewMessage(text)
    if (m !== undefined) receive(m)
  })
  sub.on('message', (channel: string, text: string) => {
    if (channel === keys.ctiResets) {
      const m = parseViewMessage(text)
      if (m !== undefined) receive(m)
    } else if (channel === keys.ctiCommands(nodeId)) relay.onCommand(text)
    else if (channel === keys.ctiReplies(nodeId)) relay.onReply(text)
  })
  sub.on('ready', () => {
    if (closed) return
    Promise.all([sub.psubscribe(keys.ctiEventsPattern), sub.subscribe(keys.ctiResets, keys.ctiCommands(nodeId), keys.ctiReplies(nodeId))])
      .then(loadAll)
      .catch((e: unknown) => logger.debug({ err: (e as Error).message }, 'cti: subscription failed; retried at the next reconnection'))
  })
  conn.onReady(() => {
    republish = true
    void rewrite()
  })

  const check = async (): Promise<void> => {
    if (closed) return
    if (!conn.isReady() || sub.status !== 'ready') {
      downSince ??= performance.now()
      if (performance.now() - downSince > deps.leaseMs && peers.size > 0) {
        logger.warn('cti: Redis unreachable for a lease: the view keeps this box\'s channels only until it is back')
        for (const node of [...peers.keys()]) forgetPeer(node)
      }
      return
    }
    if (downSince !== undefined) {
      downSince = undefined
      void loadAll()
    }
    // The hash always holds `~seq` once written: gone, a peer deleted it while this node's lease
    // had lapsed (a stall, a partition that did not drop the connection): write it all again.
    if (local !== undefined && !republish) {
      try {
        if ((await conn.redis.exists(keys.ctiChannels(nodeId))) === 0) republish = true
      } catch {
        return
      }
    }
    if (republish) void rewrite()
    for (const [node, state] of [...peers]) {
      if (state.loading) continue
      if (state.run === '') {
        void load(node)
        continue
      }
      try {
        const gone = await runScript(conn.redis, DROP_CTI_CHANNELS, [keys.lease(node), keys.ctiChannels(node)], [])
        if (gone === 1 && !closed) forgetPeer(node)
      } catch {
        return
      }
    }
  }
  let checking = false
  const timer = setInterval(() => {
    if (checking) return
    checking = true
    void check().finally(() => (checking = false))
  }, CHECK_MS)
  timer.unref()

  return {
    attach(l, listener) {
      local = l
      onRemote = listener
      relay.bind(l)
      void rewrite()
    },
    share,
    *channelsOf(domain: string) {
      for (const uuid of byDomain.get(domain.toLowerCase()) ?? []) {
        const ch = byUuid.get(uuid)
        if (ch !== undefined) yield ch
      }
    },
    channel: (uuid) => byUuid.get(uuid),
    command: (node: string, source: CommandSource, frame: string, unreachable: (d: string) => string) => relay.send(node, source, frame, unreachable),
    async close() {
      closed = true
      clearInterval(timer)
      relay.close()
      try {
        await sub.quit()
      } catch {
        sub.disconnect()
      }
    },
  }
}
