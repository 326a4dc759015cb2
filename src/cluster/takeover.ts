/**
 * A peer delivers a dead node's results (docs/cluster.md "Results survive a node"). Every
 * `lease_ms/2`, each node looks at the registry for nodes whose lease is gone and whose results
 * stream (results.ts) still exists, and tries the CLAIM script: one claimer only, atomically, the
 * stream renamed to a key of the claimer's and every request id in it marked claimed (so the dead
 * node, back, delivers none of them).
 *
 * The claimer folds the taken stream by request id and hands what was not finished to its own
 * callback dispatcher, so it is journaled here (and mirrored into this node's stream in turn):
 * - a result not acked: the same record (delivery id, body bytes) again (`adopt`);
 * - an accepted request without a result: `outcome_unknown` (its legs were on the dead box; nothing
 *   can tell how they ended).
 * Then the taken key is deleted. A claimer that dies before that finds its taken keys (its
 * `takenby` set) at its next start and hands them over then.
 */
import type { ResultRecord } from '../journal/types.js'
import type { CallResult } from '../origination/outcome.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'
import type { AcceptedLite } from './results.js'
import { CLAIM, runScript } from './scripts.js'

/** The claimed set lives a day: a node away longer has forgotten nothing it could still deliver. */
const CLAIMED_TTL_MS = 24 * 60 * 60 * 1000

/** Where taken results go: the node's callback dispatcher (src/callbacks/dispatcher.ts). */
export interface TakenResultSink {
  adopt(record: ResultRecord): void
  deliver(domain: string, url: string, result: CallResult, meta: { requestId: string }): void
}

export interface TakeoverDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly leaseMs: number
  readonly sink: TakenResultSink
  readonly outcomeUnknown: () => CallResult
  readonly logger: Logger
}

export interface Takeover {
  /** One round now (tests; the timer runs them every lease/2). */
  round(): Promise<number>
  stop(): Promise<void>
}

interface Folded {
  accepted?: AcceptedLite
  result?: ResultRecord
  done: boolean
}

export function startTakeover(deps: TakeoverDeps): Takeover {
  const { conn, keys } = deps
  let running: Promise<number> | undefined
  let stopped = false
  let seq = 0

  const handOver = async (taken: string): Promise<number> => {
    const entries = await conn.redis.xrange(taken, '-', '+')
    const byRequest = new Map<string, Folded>()
    for (const [, fields] of entries) {
      const f = new Map<string, string>()
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i] ?? '', fields[i + 1] ?? '')
      const rid = f.get('rid')
      if (rid === undefined) continue
      const s = byRequest.get(rid) ?? { done: false }
      byRequest.set(rid, s)
      const k = f.get('k')
      if (k === 'accepted') s.accepted = JSON.parse(f.get('d') ?? 'null') as AcceptedLite
      else if (k === 'result') s.result = JSON.parse(f.get('d') ?? 'null') as ResultRecord
      else if (k === 'done') s.done = true
    }
    let n = 0
    for (const [rid, s] of byRequest) {
      if (s.done) continue
      if (s.result !== undefined) {
        deps.sink.adopt(s.result)
        n++
      } else if (s.accepted?.callbackUrl !== undefined) {
        deps.sink.deliver(s.accepted.domain, s.accepted.callbackUrl, deps.outcomeUnknown(), { requestId: rid })
        n++
      }
    }
    await conn.redis.del(taken)
    await conn.redis.srem(keys.takenBy(deps.nodeId), taken)
    return n
  }

  const round = async (): Promise<number> => {
    if (!conn.isReady()) return 0
    let handed = 0
    // Left by an earlier run of ours that died before handing them over.
    const mine = keys.taken(deps.nodeId)
    for (const key of await conn.redis.smembers(keys.takenBy(deps.nodeId))) handed += await handOver(key)
    const nodes = await conn.redis.hkeys(keys.nodes)
    for (const node of nodes) {
      if (node === deps.nodeId || stopped) continue
      const taken = `${mine}${node}:${Date.now()}-${seq++}`
      const got = await runScript(conn.redis, CLAIM, [keys.lease(node), keys.results(node), keys.claimed(node), taken, keys.takenBy(deps.nodeId)], [CLAIMED_TTL_MS])
      if (got !== 1) continue
      const n = await handOver(taken)
      handed += n
      deps.logger.warn({ node, results: n }, 'took over the results of a node whose lease expired')
    }
    return handed
  }

  const guarded = (): Promise<number> => {
    running ??= round()
      .catch((e: unknown) => {
        deps.logger.debug({ err: (e as Error).message }, 'takeover round failed; tried again later')
        return 0
      })
      .finally(() => (running = undefined))
    return running
  }

  const timer = setInterval(() => void guarded(), Math.max(250, Math.floor(deps.leaseMs / 2)))
  timer.unref()
  return {
    round: guarded,
    async stop() {
      stopped = true
      clearInterval(timer)
      if (running !== undefined) await running
    },
  }
}
