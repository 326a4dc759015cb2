/**
 * A node of a cluster (docs/cluster.md): several FreeSWITCH boxes, one daemon beside each,
 * sharing state through one Redis. Loaded by src/daemon.ts only when daemon.yaml has a `cluster`
 * section (a dynamic import): a single node never loads this folder nor ioredis.
 *
 * What it gives the daemon: the channel limit across nodes (`sharedLimit`, for the engine), kept
 * by this node's lease and counts (lease.ts); the journal mirrored into Redis (results.ts) and
 * the takeover of dead peers' results (takeover.ts); Idempotency-Keys across nodes
 * (idempotency.ts, for the API's store); call_user for a user another box has (forward.ts, asking
 * first the nodes whose box published it, registrations.ts); one
 * CTI view of every box's channels, commands carried out by the channel's node (cti-view.ts).
 */
import type { ForwardedReply, ForwardedRequest } from '../api/app.js'
import type { SharedIdempotency } from '../api/idempotency.js'
import type { CtiPeers } from '../cti/peers.js'
import type { DaemonConfig } from '../config/schema.js'
import type { Journal } from '../journal/types.js'
import type { BoxRegistrations } from '../pbx/box-registrations.js'
import type { SharedLimit } from '../origination/admission.js'
import { outcomeUnknown } from '../origination/outcome.js'
import type { Logger } from '../util/logger.js'
import { connectRedis } from './connection.js'
import { createCtiView } from './cti-view.js'
import { clusterKeys } from './keys.js'
import { keepLease } from './lease.js'
import { forwarder } from './forward.js'
import { sharedIdempotency } from './idempotency.js'
import { publishRegistrations, registrationKeys } from './registrations.js'
import { mirrorJournal } from './results.js'
import { createSharedLimit } from './shared-limit.js'
import { startTakeover, type TakenResultSink, type Takeover } from './takeover.js'

export type ClusterConfig = NonNullable<DaemonConfig['cluster']>

/** How long a start waits for Redis before going on without it (admissions answer 503 meanwhile). */
const START_WAIT_MS = 3000

export interface ClusterDeps {
  /** Where peers reach this node's API when `cluster.api_url` does not say. */
  readonly apiUrl: string
  readonly domains: () => readonly string[]
  /** This node's channels in use for a domain (the engine's limiter: live + reserved). */
  readonly localInUse: (domain: string) => number
  /** The node's result journal: mirrored into Redis (results.ts). */
  readonly journal: Journal
  readonly logger: Logger
  /** The API prefix (`http.prefix`), to reach the other nodes' API. */
  readonly apiPrefix: () => string
  /** Key prefix in Redis (tests: one per test file when they share a Redis). */
  readonly prefix?: string
  /** This node's box's registrations, published for the other nodes' call_user (registrations.ts). */
  readonly box?: BoxRegistrations
}

export interface ClusterNode {
  readonly nodeId: string
  readonly sharedLimit: SharedLimit
  /** The journal to use instead of the node's own: the same, mirrored into Redis. */
  readonly journal: Journal
  readonly idempotency: SharedIdempotency
  /** A call_user whose user this box does not have, handed to the nodes that may (forward.ts). */
  readonly forwardUnregistered: (req: ForwardedRequest) => Promise<ForwardedReply | undefined>
  /** The other boxes' channels for this node's CTI (cti-view.ts). */
  readonly ctiPeers: CtiPeers
  /** Starts delivering the results of dead peers through `sink` (the callback dispatcher). */
  takeOver(sink: TakenResultSink): void
  /** Stops renewing the lease and closes the connection. */
  close(): Promise<void>
}

export async function startCluster(cfg: ClusterConfig, deps: ClusterDeps): Promise<ClusterNode> {
  const log = deps.logger
  const conn = connectRedis(cfg.redis, log)
  const prefix = deps.prefix ?? 'cod'
  const keys = clusterKeys(prefix)
  const lease = keepLease({
    conn,
    keys,
    nodeId: cfg.node_id,
    apiUrl: cfg.api_url ?? deps.apiUrl,
    leaseMs: cfg.lease_ms,
    domains: deps.domains,
    localInUse: deps.localInUse,
    logger: log,
  })
  const renewed = await Promise.race([
    new Promise<boolean>((resolve) => conn.onReady(() => void lease.renewNow().then(resolve))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), START_WAIT_MS).unref()),
  ])
  if (renewed) log.info({ node: cfg.node_id, leaseMs: cfg.lease_ms }, 'cluster node joined')
  else log.warn({ node: cfg.node_id }, 'cluster: Redis not reachable yet; admissions are refused (503) until it is')
  // With the lease renewed no peer takes anything more from us: what they took is dropped here.
  const mirror = mirrorJournal(deps.journal, { conn, keys, nodeId: cfg.node_id, logger: log })
  await mirror.start()
  let takeover: Takeover | undefined
  const registrations = deps.box === undefined ? undefined : publishRegistrations({ conn, keys, regKeys: registrationKeys(prefix), nodeId: cfg.node_id, box: deps.box, logger: log.child({ part: 'registrations' }) })
  const ctiView = createCtiView({ conn, keys, nodeId: cfg.node_id, leaseMs: cfg.lease_ms, logger: log.child({ part: 'cti-view' }) })
  return {
    nodeId: cfg.node_id,
    sharedLimit: createSharedLimit({ conn, keys, nodeId: cfg.node_id, leaseMs: cfg.lease_ms, lease }),
    journal: mirror.journal,
    idempotency: sharedIdempotency(conn, prefix, log),
    ctiPeers: ctiView,
    forwardUnregistered: forwarder({ conn, keys, nodeId: cfg.node_id, prefix: deps.apiPrefix, logger: log, ...(registrations !== undefined ? { owners: registrations.owners } : {}) }),
    takeOver(sink) {
      takeover ??= startTakeover({ conn, keys, nodeId: cfg.node_id, leaseMs: cfg.lease_ms, sink, outcomeUnknown, logger: log })
    },
    async close() {
      await takeover?.stop()
      await ctiView.close()
      registrations?.stop()
      await lease.stop()
      mirror.stop()
      await conn.close()
    },
  }
}
