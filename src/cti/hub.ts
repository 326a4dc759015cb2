/**
 * The subscribers: who is connected, what each may see, and delivery of channel changes.
 *
 * Cost model: a channel change is serialised once (JSON.stringify of its view) and encoded to
 * UTF-8 once; each subscriber that may see it gets one WebSocket message made of a small head of
 * its own (sequence number and event kind, ASCII) and a copy of the shared encoded payload. One
 * message, not the head and the payload as two fragments of one (RFC 6455 section 5.4), as until
 * issue 32: ws writes each frame to the socket with a system call of its own, and two writes per
 * subscriber cost more than copying a few kilobytes (bench/fanout.ts: 1.6x the CPU per event per
 * subscriber of a bare ws broadcast with fragments, docs/bench.md says how much less). Only the
 * subscribers indexed under the channel's domain (full_events) or one of its party users are
 * visited, so an event costs nothing for the domain's other users or other domains. A change
 * no subscriber may see is not serialised at all (nobody can know the channel: who may see a
 * channel only grows, so its cached view is dropped and computed afresh when someone may).
 *
 * In a cluster (peers.ts), the peers' channels are part of the view: a new subscriber's
 * initial_info lists them after this box's, and their changes are delivered exactly as this
 * box's are (the same frames, built from the view the owning node serialised). This box's
 * changes are then serialised whether or not a subscriber here watches, and shared.
 *
 * A subscriber that does not read is closed once its unsent data passes `cti.max_buffered_bytes`
 * (plus the size of its initial snapshot), so it cannot make the daemon's memory grow.
 */
import type { WebSocket } from 'ws'
import type { ChannelChange, ChannelModel } from '../channels/index.js'
import type { Logger } from '../util/logger.js'
import { CLOSE, eventHead, eventTail, initialInfoFrame, systemFrame, type InfoEventKind } from './protocol.js'
import { isVisible, ViewCache } from './view.js'
import type { Credential } from './policy.js'
import type { CtiPeers, RemoteChange, SharedChannel } from './peers.js'

export interface CtiSettings {
  readonly max_connections_per_user: number
  readonly max_buffered_bytes: number
}

export interface Admission {
  /** Lower-case domain name (channels are indexed by it). */
  readonly domain: string
  /** undefined: full_events (every channel of the domain). */
  readonly userId: string | undefined
  readonly appName: string
  readonly forced: boolean
  /** A ticket connection acts with less than the token's powers (policy.ts). */
  readonly credential: Credential
  /** read_only=true: it observes and commands nothing (policy.ts mayCommand). */
  readonly readOnly: boolean
  /** The domain's channel_limit as its initial_info tells it (policy.ts channelLimitShown); null when not told. */
  readonly channelLimit: number | null
}

export interface Subscriber {
  readonly ws: WebSocket
  readonly domain: string
  readonly userId: string | undefined
  readonly appName: string
  readonly credential: Credential
  readonly readOnly: boolean
  /** Limit key: (domain, user or full_events, app_name). */
  readonly key: string
  /** Sequence number of the last info_event sent (initial_info is 0). */
  seq: number
  /** Channels this subscriber was told about (added and not yet removed). */
  readonly known: Set<string>
  /** A pong (or any frame) arrived since the last ping. */
  alive: boolean
  closed: boolean
  /** bufferedAmount above which it is a slow consumer. */
  threshold: number
  /** Commands sent and not yet answered. */
  inflight: number
}

export interface HubDeps {
  readonly channels: ChannelModel
  readonly logger: Logger
  readonly settings: () => CtiSettings
  readonly onMessage: (sub: Subscriber, data: Buffer, isBinary: boolean) => void
  /** The other boxes' channels (a cluster); absent on a single node. */
  readonly peers?: CtiPeers
}

/** One change as subscribers get it, whichever box the channel is on. */
interface Delivery {
  readonly uuid: string
  readonly domain: string
  readonly parties: readonly string[]
  readonly json: string
  readonly removed: boolean
  /** The view is the one sent last: news only to those who may now see the channel. */
  readonly unchanged: boolean
}

/** One info_event message: the subscriber's ASCII head (protocol.ts eventHead) before the shared UTF-8 tail. */
function eventFrame(head: string, tail: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(head.length + tail.length)
  frame.write(head, 0, 'latin1')
  tail.copy(frame, head.length)
  return frame
}

const toBuffer = (data: Buffer | ArrayBuffer | Buffer[]): Buffer =>
  Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)

export class Hub {
  private readonly all = new Set<Subscriber>()
  private readonly byKey = new Map<string, Subscriber[]>()
  /** full_events subscribers per domain. */
  private readonly full = new Map<string, Set<Subscriber>>()
  /** user-scoped subscribers per `domain\0userId`. */
  private readonly byUser = new Map<string, Set<Subscriber>>()
  private readonly views = new ViewCache()

  constructor(private readonly deps: HubDeps) {}

  get size(): number {
    return this.all.size
  }

  subscribers(): Iterable<Subscriber> {
    return this.all
  }

  add(ws: WebSocket, admission: Admission): void {
    const { domain, userId, appName, forced, credential, readOnly } = admission
    const key = `${domain}\0${userId ?? '*'}\0${appName}`
    const settings = this.deps.settings()
    const max = settings.max_connections_per_user
    const list = this.byKey.get(key) ?? []
    const log = this.deps.logger.child({ domain, user_id: userId ?? null, app_name: appName })
    ws.on('error', (e) => log.debug({ err: e.message }, 'cti socket error'))
    if (list.length >= max && !forced) {
      log.info({ max }, 'cti connection refused: connection limit reached')
      ws.send(
        systemFrame(
          'connection_limit_reached',
          `at most ${max} connections per user and app_name; connect with forced=true to replace the oldest`,
        ),
      )
      ws.close(CLOSE.limitReached, 'connection_limit_reached')
      return
    }
    while (list.length >= max) {
      const oldest = list[0]
      if (oldest === undefined) break
      log.info('cti connection replaced by a forced one')
      this.send(oldest, systemFrame('connection_replaced', 'a newer connection of the same user and app_name (forced=true) took this one\'s place'))
      this.remove(oldest)
      oldest.ws.close(CLOSE.replaced, 'connection_replaced')
    }

    const sub: Subscriber = {
      ws,
      domain,
      userId,
      appName,
      credential,
      readOnly,
      key,
      seq: 0,
      known: new Set(),
      alive: true,
      closed: false,
      threshold: settings.max_buffered_bytes,
      inflight: 0,
    }
    this.all.add(sub)
    list.push(sub)
    this.byKey.set(key, list)
    const index = userId === undefined ? this.full : this.byUser
    const indexKey = userId === undefined ? domain : `${domain}\0${userId}`
    let set = index.get(indexKey)
    if (set === undefined) index.set(indexKey, (set = new Set()))
    set.add(sub)

    ws.on('pong', () => {
      sub.alive = true
    })
    ws.on('message', (data, isBinary) => {
      sub.alive = true
      this.deps.onMessage(sub, toBuffer(data), isBinary)
    })
    ws.on('close', () => {
      this.remove(sub)
      log.info('cti connection closed')
    })

    const snapshot: string[] = []
    const visible = userId === undefined ? this.deps.channels.ofDomain(domain) : this.deps.channels.ofUser(domain, userId)
    for (const ch of visible) {
      snapshot.push(this.views.get(ch))
      sub.known.add(ch.uuid)
    }
    if (this.deps.peers !== undefined) {
      for (const rc of this.deps.peers.channelsOf(domain)) {
        if (sub.known.has(rc.uuid) || !isVisible(rc, domain, userId)) continue
        snapshot.push(rc.view)
        sub.known.add(rc.uuid)
      }
    }
    const connection = {
      domain,
      user_id: userId ?? null,
      full_events: userId === undefined,
      app_name: appName,
      read_only: readOnly,
      channel_limit: admission.channelLimit,
    }
    ws.send(initialInfoFrame(connection, snapshot))
    // The snapshot is sent once and may be large: only what comes after it is limited.
    sub.threshold = settings.max_buffered_bytes + ws.bufferedAmount
    log.info({ channels: snapshot.length }, 'cti connection opened')
  }

  /** Delivers a channel change: one serialisation, whatever the number of subscribers. */
  publish(change: ChannelChange): void {
    const ch = change.channel
    const removed = change.kind === 'destroyed'
    const domain = ch.domain
    const peers = this.deps.peers
    if (domain === undefined || (peers === undefined && !this.watched(domain, ch.parties))) {
      this.views.forget(ch.uuid)
      return
    }
    const view = this.views.refresh(ch)
    if (removed) this.views.forget(ch.uuid)
    peers?.share({ uuid: ch.uuid, domain, parties: ch.parties, userId: ch.userId, view: view.json }, removed)
    // An unchanged view is news only to those who may now see the channel for the first
    // time (a user became a party of it): they get `added`, the others nothing.
    this.deliver({ uuid: ch.uuid, domain, parties: ch.parties, json: view.json, removed, unchanged: !removed && view.unchanged })
  }

  /** This box's channels of these domains as peers get them (a full republication). */
  *shared(domains: Iterable<string>): Iterable<SharedChannel> {
    for (const name of domains) {
      const domain = name.toLowerCase()
      for (const ch of this.deps.channels.ofDomain(domain)) {
        yield { uuid: ch.uuid, domain, parties: ch.parties, userId: ch.userId, view: this.views.get(ch) }
      }
    }
  }

  /** Delivers a change of a peer's channel (peers.ts), as a change of this box's is. */
  publishRemote(change: RemoteChange): void {
    const { channel, removed, unchanged } = change
    this.deliver({ uuid: channel.uuid, domain: channel.domain, parties: channel.parties, json: channel.view, removed, unchanged: !removed && unchanged })
  }

  private deliver(d: Delivery): void {
    const { uuid, domain, json, removed, unchanged } = d
    let tail: Buffer | undefined
    const deliver = (sub: Subscriber): void => {
      if (sub.closed) return
      let kind: InfoEventKind
      if (removed) {
        if (!sub.known.delete(uuid)) return
        kind = 'removed'
      } else if (sub.known.has(uuid)) {
        if (unchanged) return
        kind = 'updated'
      } else {
        kind = 'added'
        sub.known.add(uuid)
      }
      tail ??= Buffer.from(eventTail(json), 'utf8')
      sub.seq += 1
      sub.ws.send(eventFrame(eventHead(sub.seq, kind), tail), { binary: false })
      this.checkBuffer(sub)
    }
    const full = this.full.get(domain)
    if (full !== undefined) for (const sub of full) deliver(sub)
    for (const userId of d.parties) {
      const subs = this.byUser.get(`${domain}\0${userId}`)
      if (subs !== undefined) for (const sub of subs) deliver(sub)
    }
  }

  /** Sends a whole message to one subscriber (results, system messages). */
  send(sub: Subscriber, frame: string): void {
    if (sub.closed) return
    sub.ws.send(frame)
    this.checkBuffer(sub)
  }

  /**
   * Keepalive: a subscriber that sent nothing (no pong) since the previous ping is gone
   * (a dead TCP peer never says so) and is terminated; the others are pinged.
   */
  ping(): void {
    for (const sub of [...this.all]) {
      if (!sub.alive) {
        this.deps.logger.info({ domain: sub.domain, user_id: sub.userId ?? null, app_name: sub.appName }, 'cti connection missed a pong: terminated')
        this.remove(sub)
        sub.ws.terminate()
        continue
      }
      sub.alive = false
      sub.ws.ping()
    }
  }

  /** Closes every subscriber; resolves when all sockets are closed or after `graceMs` (then they are terminated). */
  async closeAll(graceMs: number): Promise<void> {
    const sockets = [...this.all].map((s) => s.ws)
    for (const sub of [...this.all]) this.remove(sub)
    const closed = sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === ws.CLOSED) return resolve()
          ws.once('close', () => resolve())
        }),
    )
    for (const ws of sockets) ws.close(CLOSE.shutdown, 'server_shutdown')
    let timer: NodeJS.Timeout | undefined
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    for (const ws of sockets) ws.terminate()
  }

  /** Whether any subscriber may see the channel: full_events of its domain, or a user party to it. */
  private watched(domain: string, parties: readonly string[]): boolean {
    if (this.full.has(domain)) return true
    for (const userId of parties) if (this.byUser.has(`${domain}\0${userId}`)) return true
    return false
  }

  private checkBuffer(sub: Subscriber): void {
    if (sub.closed || sub.ws.bufferedAmount <= sub.threshold) return
    this.deps.logger.warn(
      { domain: sub.domain, user_id: sub.userId ?? null, app_name: sub.appName, buffered: sub.ws.bufferedAmount },
      'cti slow consumer closed',
    )
    this.remove(sub)
    // Nothing more is queued for it; ws destroys the socket if the close handshake does not
    // complete within its closeTimeout.
    sub.ws.close(CLOSE.slowConsumer, 'slow_consumer')
  }

  private remove(sub: Subscriber): void {
    if (sub.closed) return
    sub.closed = true
    sub.known.clear()
    this.all.delete(sub)
    const list = this.byKey.get(sub.key)
    if (list !== undefined) {
      const i = list.indexOf(sub)
      if (i >= 0) list.splice(i, 1)
      if (list.length === 0) this.byKey.delete(sub.key)
    }
    const index = sub.userId === undefined ? this.full : this.byUser
    const indexKey = sub.userId === undefined ? sub.domain : `${sub.domain}\0${sub.userId}`
    const set = index.get(indexKey)
    set?.delete(sub)
    if (set?.size === 0) index.delete(indexKey)
  }
}
