/**
 * Results survive a node (docs/cluster.md "Results survive a node"): the node's journal
 * (src/journal/), mirrored into a Redis stream of its own, `cod:results:<node>`, so that when the
 * node dies a peer can deliver what it had not (takeover.ts). A decorator of the `Journal`
 * interface: every record is written to the local journal first, exactly as before, then to the
 * stream; the parts that write the journal (the API, the dispatcher) do not know about it.
 *
 * Stream entries: `k` (accepted | result | done), `rid` (request id), `d` (JSON: the accepted
 * request, or the result record with its delivery id and body bytes). An accepted request and a
 * result are awaited into the stream (at most the command timeout) before the API's 200 and the
 * first attempt, so a node killed right after either has it in Redis. Redis unreachable: entries
 * wait in memory, in order, and are written when it is back. Redis restarted empty: the node
 * writes its open requests and results again (the stream is gone but the node still has them).
 *
 * Requests a peer took over while this node was dead or cut off (the claimed set, takeover.ts)
 * are dropped from this node: ended/acked in its journal, left out of the replay, so that the
 * node, back, never delivers a second result for them.
 */
import type { AcceptedRequest, Journal, JournalReplay, ResultRecord } from '../journal/types.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'

type Kind = 'accepted' | 'result' | 'done'

interface Entry {
  readonly k: Kind
  readonly rid: string
  readonly d: string
  readonly written: () => void
}

/** What a peer needs of an accepted request to give it its result. */
export interface AcceptedLite {
  readonly requestId: string
  readonly domain: string
  readonly operation: string
  readonly callbackUrl?: string
}

/** How often the backlog is retried and the stream trimmed of finished requests. */
const PUMP_MS = 500
const TRIM_MS = 10_000
const BATCH = 200

export interface MirrorDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly logger: Logger
}

export interface ResultsMirror {
  readonly journal: Journal
  /**
   * Reads the request ids peers took over from this node and drops them here (call after the
   * node's lease is renewed, so no peer can take more meanwhile). Returns how many were dropped.
   */
  dropClaimed(): Promise<number>
  /**
   * At start, once the lease is renewed: drops what peers took over, then writes what the local
   * journal still holds open into the stream again (repeats are harmless: a peer folds entries
   * by request id).
   */
  start(): Promise<void>
  /** Entries waiting for Redis. */
  backlog(): number
  stop(): void
}

const liteOf = (a: AcceptedRequest): AcceptedLite => ({
  requestId: a.requestId,
  domain: a.domain,
  operation: a.operation,
  ...(a.callbackUrl !== undefined ? { callbackUrl: a.callbackUrl } : {}),
})

export function mirrorJournal(inner: Journal, deps: MirrorDeps): ResultsMirror {
  const { conn, keys } = deps
  const stream = keys.results(deps.nodeId)
  const backlog: Entry[] = []
  /** Requests not finished: what the stream must still hold. Insertion order ~ time order. */
  const open = new Map<string, { accepted?: AcceptedLite; result?: ResultRecord; firstId?: string }>()
  const ridOfDelivery = new Map<string, string>()
  let busy = false
  let lastId: string | undefined
  let dropped: ReadonlySet<string> = new Set()

  // What the local journal holds at start is open until it ends, here as in the stream.
  const replay = inner.replay()
  for (const r of replay.openRequests) if (r.callbackUrl !== undefined) open.set(r.requestId, { accepted: liteOf(r) })
  for (const p of replay.pendingResults) {
    // Notices are not mirrored (types.ts NoticeFields): only a request's result is taken over.
    if (p.result.notice !== undefined) continue
    open.set(p.result.requestId, { ...open.get(p.result.requestId), result: p.result })
    ridOfDelivery.set(p.result.deliveryId, p.result.requestId)
  }

  const pump = async (): Promise<void> => {
    if (busy) return
    busy = true
    try {
      while (backlog.length > 0 && conn.isReady()) {
        const batch = backlog.slice(0, BATCH)
        const p = conn.redis.pipeline()
        for (const e of batch) p.xadd(stream, '*', 'k', e.k, 'rid', e.rid, 'd', e.d)
        const res = (await p.exec()) ?? []
        let n = 0
        while (n < batch.length && res[n] !== undefined && res[n]?.[0] === null) {
          const id = String(res[n]?.[1])
          const e = batch[n]
          if (e !== undefined) {
            const o = open.get(e.rid)
            if (o !== undefined && o.firstId === undefined) o.firstId = id
          }
          lastId = id
          n++
        }
        backlog.splice(0, n)
        for (const e of batch.slice(0, n)) e.written()
        if (n < batch.length) break
      }
    } catch (e) {
      deps.logger.debug({ err: (e as Error).message }, 'results stream: write failed, kept for later')
    } finally {
      busy = false
      // Nobody waits for Redis longer than one try: what is left is written when it is back.
      for (const e of backlog) e.written()
    }
  }

  const add = (k: Kind, rid: string, d: unknown): Promise<void> => {
    if (dropped.has(rid)) return Promise.resolve()
    return new Promise((resolve) => {
      backlog.push({ k, rid, d: JSON.stringify(d), written: resolve })
      void pump()
    })
  }

  const finish = (rid: string | undefined): void => {
    if (rid === undefined || !open.has(rid)) return
    open.delete(rid)
    void add('done', rid, null)
  }

  /** After Redis restarted empty (or our stream was taken while we were cut off): the open ones again. */
  const rewriteIfGone = async (): Promise<void> => {
    if (open.size === 0 || (await conn.redis.exists(stream).catch(() => 1)) === 1) return
    deps.logger.warn({ open: open.size }, 'results stream missing (Redis restarted empty?): writing the open requests again')
    for (const [rid, o] of open) {
      o.firstId = undefined
      if (o.accepted !== undefined) void add('accepted', rid, o.accepted)
      if (o.result !== undefined) void add('result', rid, o.result)
    }
  }

  const trim = (): void => {
    if (!conn.isReady() || lastId === undefined) return
    let min: string | undefined
    for (const o of open.values()) {
      // An open request whose entry is not written yet: nothing can be trimmed safely.
      if (o.firstId === undefined) return
      if (min === undefined || compareIds(o.firstId, min) < 0) min = o.firstId
    }
    void conn.redis.xtrim(stream, 'MINID', min ?? lastId).catch(() => undefined)
  }

  const pumpTimer = setInterval(() => void pump(), PUMP_MS)
  pumpTimer.unref()
  const trimTimer = setInterval(trim, TRIM_MS)
  trimTimer.unref()
  conn.onReady(() => {
    void dropClaimed().then(rewriteIfGone).then(pump, () => undefined)
  })

  async function dropClaimed(): Promise<number> {
    const claimed = new Set(await conn.redis.smembers(keys.claimed(deps.nodeId)))
    if (claimed.size === 0) return 0
    dropped = new Set([...dropped, ...claimed])
    let n = 0
    for (const rid of claimed) {
      const o = open.get(rid)
      if (o === undefined) continue
      open.delete(rid)
      n++
      // The peer delivers it: done here, locally too.
      if (o.result !== undefined) await inner.acked(o.result.deliveryId)
      else await inner.ended(rid)
    }
    await conn.redis.del(keys.claimed(deps.nodeId))
    if (n > 0) deps.logger.warn({ count: n }, 'requests taken over by a peer while this node was away: their results are the peer\'s to deliver')
    return n
  }

  const start = async (): Promise<void> => {
    try {
      await dropClaimed()
    } catch (e) {
      // Redis unreachable at start: nothing can tell what peers took; the journal's results go out (docs/cluster.md "Failures").
      deps.logger.warn({ err: (e as Error).message }, 'cluster: could not read the requests peers took over; delivering the journal\'s results')
    }
    for (const [rid, o] of open) {
      if (o.accepted !== undefined) void add('accepted', rid, o.accepted)
      if (o.result !== undefined) void add('result', rid, o.result)
    }
  }

  const journal: Journal = {
    intended: (rec) => inner.intended(rec),
    unplaced: (id) => inner.unplaced(id),
    async accepted(rec) {
      await inner.accepted(rec)
      if (rec.callbackUrl === undefined) return
      const lite = liteOf(rec)
      open.set(rec.requestId, { accepted: lite })
      await add('accepted', rec.requestId, lite)
    },
    // Said of every request once its outcome is known; only those without callback_url end with
    // it, and those are not mirrored (nothing to deliver): a result ends at its ack.
    ended: (id) => inner.ended(id),
    // Not mirrored, as notices are not: a node takes its own calls' status events up after its restart.
    followed: (id) => inner.followed(id),
    async result(rec) {
      await inner.result(rec)
      ridOfDelivery.set(rec.deliveryId, rec.requestId)
      open.set(rec.requestId, { ...open.get(rec.requestId), result: rec })
      await add('result', rec.requestId, rec)
    },
    // Not mirrored: a peer takes over results only (docs/cluster.md).
    notice: (rec) => inner.notice(rec),
    attempted: (id, progress) => inner.attempted(id, progress),
    async acked(deliveryId) {
      await inner.acked(deliveryId)
      finish(ridOfDelivery.get(deliveryId))
      ridOfDelivery.delete(deliveryId)
    },
    async deadLetter(deliveryId, reason, attempts) {
      await inner.deadLetter(deliveryId, reason, attempts)
      finish(ridOfDelivery.get(deliveryId))
    },
    revived: (id, giveUpAt) => inner.revived(id, giveUpAt),
    replay: (): JournalReplay => ({
      ...replay,
      openRequests: replay.openRequests.filter((r) => !dropped.has(r.requestId)),
      pendingResults: replay.pendingResults.filter((p) => !dropped.has(p.result.requestId)),
    }),
    deadLetters: () => inner.deadLetters(),
    stats: () => inner.stats(),
    close: () => inner.close(),
  }

  return {
    journal,
    dropClaimed,
    start,
    backlog: () => backlog.length,
    stop() {
      clearInterval(pumpTimer)
      clearInterval(trimTimer)
    },
  }
}

/** Orders two stream ids (`<ms>-<seq>`). */
function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number)
  const [bm = 0, bs = 0] = b.split('-').map(Number)
  return am !== bm ? am - bm : as - bs
}
