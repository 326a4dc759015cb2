/**
 * This node's lease, registry entry and in-use counts, kept fresh in Redis (docs/cluster.md
 * "Leases"). One loop every PUBLISH_MS: the counts are sent when one changed (so peers see a slot
 * come back within ~PUBLISH_MS), and everything (lease included) at least every lease/3, and at
 * once after each reconnection. A node that stops (crash, partition) stops renewing: its lease
 * key expires after `lease_ms` and the others stop counting its channels.
 *
 * The counts are the node's own limiter's (live + reserved, `Engine.inUse`): each node counts its
 * box exactly; Redis only sums them.
 */
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'
import { RENEW, runScript } from './scripts.js'

/**
 * How often changed counts are published.
 * @internal Exported for tests: test/cluster waits for the publications.
 */
export const PUBLISH_MS = 250

export interface LeaseDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly apiUrl: string
  readonly leaseMs: number
  /** The configured domains (read at every tick: a reload may add one). */
  readonly domains: () => readonly string[]
  /** This node's channels in use for a domain: live + reserved. */
  readonly localInUse: (domain: string) => number
  readonly logger: Logger
}

export interface Lease {
  /** Resolves after the next successful renewal (tests, start). */
  renewNow(): Promise<boolean>
  /** A count this node wrote itself (an admission): no need to send it again. */
  noteSent(domain: string, count: number): void
  /**
   * Stops renewing. The lease is left to expire rather than deleted: calls the box still carries
   * after the daemon stopped keep counting for one more lease.
   */
  stop(): Promise<void>
}

export function keepLease(deps: LeaseDeps): Lease {
  const { conn, keys } = deps
  const renewEveryMs = Math.max(100, Math.floor(deps.leaseMs / 3))
  const sent = new Map<string, number>()
  let lastRenewAt = -Infinity
  let inFlight: Promise<boolean> | undefined
  let stopped = false

  const renew = (): Promise<boolean> => {
    if (inFlight !== undefined) return inFlight
    const domains = [...new Set(deps.domains().map((d) => d.toLowerCase()))]
    const counts = domains.map((d) => deps.localInUse(d))
    inFlight = runScript(
      conn.redis,
      RENEW,
      [keys.lease(deps.nodeId), keys.nodes, keys.since, ...domains.map((d) => keys.inUse(d))],
      [deps.nodeId, deps.apiUrl, deps.leaseMs, ...counts],
    ).then(
      () => {
        lastRenewAt = performance.now()
        domains.forEach((d, i) => sent.set(d, counts[i] ?? 0))
        return true
      },
      (e: unknown) => {
        deps.logger.debug({ err: (e as Error).message }, 'lease renewal failed')
        return false
      },
    )
    void inFlight.finally(() => (inFlight = undefined))
    return inFlight
  }

  const changed = (): boolean => deps.domains().some((d) => sent.get(d.toLowerCase()) !== deps.localInUse(d))

  const tick = () => {
    if (stopped || !conn.isReady()) return
    if (performance.now() - lastRenewAt >= renewEveryMs || changed()) void renew()
  }
  const timer = setInterval(tick, PUBLISH_MS)
  timer.unref()
  conn.onReady(() => {
    if (!stopped) void renew()
  })

  return {
    renewNow: async () => {
      if (inFlight !== undefined) await inFlight
      return renew()
    },
    noteSent: (domain, count) => void sent.set(domain.toLowerCase(), count),
    async stop() {
      stopped = true
      clearInterval(timer)
      if (inFlight !== undefined) await inFlight
    },
  }
}
