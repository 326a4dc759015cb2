/**
 * The channel limit across nodes (docs/cluster.md "The channel limit across nodes"): the engine's
 * `SharedLimit` (src/origination/admission.ts), asked after a request's channels were reserved
 * by the node's own limiter. One ADMIT script sums the counts of the nodes alive and adds this
 * node's, or refuses. Redis unreachable, slow or just restarted empty: refused with
 * `cluster_unavailable` (503) — never admitted on a guess.
 */
import { err, ok, type Result } from '../util/result.js'
import type { SharedLimit } from '../origination/admission.js'
import { refusal, type OriginationRefusal } from '../origination/refusal.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'
import type { Lease } from './lease.js'
import { ADMIT, runScript } from './scripts.js'

export interface SharedLimitDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly leaseMs: number
  readonly lease: Lease
}

const unavailable = (why: string): OriginationRefusal => refusal('cluster_unavailable', `the cluster's shared state (Redis) is unavailable: ${why}`)

export function createSharedLimit(deps: SharedLimitDeps): SharedLimit {
  const { conn, keys } = deps
  return {
    async reserve(domain, limit, wanted, localInUse): Promise<Result<void, OriginationRefusal>> {
      if (!conn.isReady()) return err(unavailable('not connected'))
      let reply: unknown
      try {
        reply = await runScript(
          conn.redis,
          ADMIT,
          [keys.inUse(domain), keys.since, keys.lease(deps.nodeId)],
          [deps.nodeId, localInUse, wanted, limit, keys.leasePrefix, deps.leaseMs],
        )
      } catch (e) {
        return err(unavailable((e as Error).message))
      }
      const [code, detail] = Array.isArray(reply) ? (reply as [number, number | string]) : [-1, 'unexpected reply']
      if (code === 1) {
        deps.lease.noteSent(domain, localInUse)
        return ok(undefined)
      }
      if (code === 0) {
        deps.lease.noteSent(domain, localInUse - wanted)
        return err(
          refusal(
            'channel_limit_reached',
            `domain ${domain} would exceed its channel_limit of ${limit} across the cluster (${Number(detail) - wanted} in use on every node, ${wanted} needed)`,
          ),
        )
      }
      if (detail === 'no_lease') void deps.lease.renewNow()
      return err(unavailable(detail === 'warming' ? 'Redis came up empty less than a lease ago; the nodes are republishing their counts' : `this node's lease had expired (${String(detail)})`))
    },
  }
}
