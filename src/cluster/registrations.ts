/**
 * This node's box's registrations, published in Redis so that a call_user reaching any node goes
 * straight to the node(s) whose box has the user (docs/cluster.md "Registrations everywhere").
 *
 * In Redis, per user: `<prefix>:reg:<domain>:<user>`, a hash node → when the registration runs out
 * (epoch ms, FreeSWITCH's count; informative: readers trust a node's entry while its lease lives,
 * since the node removes it itself on unregister or expiry). Per node: `<prefix>:regs:<node>`, the
 * set of `<domain>:<user>` it published, so a full re-read can take back what is gone.
 *
 * Written from the box's sofia events (src/pbx/box-registrations.ts, shapes in
 * test/fixtures/freeswitch/esl/27-sofia-register-events.txt): a register sets the node's entry; an
 * unregister or an expire is one terminal going, so the box is asked (`sofia_contact`) whether the
 * user still has one before the entry is removed. A full re-read of the box's table replaces the
 * node's entries at start, at each (re)connection to FreeSWITCH (events were lost meanwhile) and
 * to Redis (it may have restarted empty), and after any failed write. Every change runs in one
 * queue, in arrival order, so a re-read never undoes a later event.
 *
 * Readers (owners()) keep the entries of nodes whose lease lives; a dead node's entries are
 * removed when read. A node partitioned from Redis loses its lease and re-publishes everything
 * when it is back.
 */
import type { BoxRegistrations, RegistrationChange } from '../pbx/box-registrations.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'

/** A failed write or box read is retried with a full re-read this often while it keeps failing. */
const RETRY_MS = 2000

export interface RegistrationKeys {
  /** Hash node → expiry (epoch ms) of one user's registrations. */
  user(domain: string, user: string): string
  /** Set of `<domain>:<user>` one node published. */
  node(node: string): string
}

export function registrationKeys(prefix: string): RegistrationKeys {
  return {
    user: (domain, user) => `${prefix}:reg:${domain.toLowerCase()}:${user.toLowerCase()}`,
    node: (node) => `${prefix}:regs:${node}`,
  }
}

export interface RegistrationsDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly regKeys: RegistrationKeys
  readonly nodeId: string
  readonly box: BoxRegistrations
  readonly logger: Logger
}

export interface PublishedRegistrations {
  /**
   * The other nodes alive whose box has the user, as published; empty when none published it (or
   * Redis cannot be read: the caller then asks every node, as before the publication).
   */
  owners(domain: string, user: string): Promise<string[]>
  /** Resolves once every change queued so far (a re-read included) is written (tests). */
  settled(): Promise<void>
  stop(): void
}

const member = (domain: string, user: string): string => `${domain.toLowerCase()}:${user.toLowerCase()}`

export function publishRegistrations(deps: RegistrationsDeps): PublishedRegistrations {
  const { conn, regKeys, nodeId, box, logger } = deps
  const redis = conn.redis
  let queue: Promise<void> = Promise.resolve()
  let stopped = false
  /** A write or a box read failed: the next re-read puts things right. */
  let dirty = false
  let resyncQueued = false

  const enqueue = (task: () => Promise<void>): void => {
    queue = queue.then(task).catch((e: unknown) => {
      dirty = true
      logger.debug({ err: (e as Error).message }, 'registrations not published; re-read later')
    })
  }

  const set = async (domain: string, user: string, expiresAt: number): Promise<void> => {
    await redis.multi().hset(regKeys.user(domain, user), nodeId, String(expiresAt)).sadd(regKeys.node(nodeId), member(domain, user)).exec()
  }

  const unset = async (m: string): Promise<void> => {
    const colon = m.indexOf(':')
    await redis.multi().hdel(regKeys.user(m.slice(0, colon), m.slice(colon + 1)), nodeId).srem(regKeys.node(nodeId), m).exec()
  }

  const apply = async (change: RegistrationChange): Promise<void> => {
    if (!conn.isReady()) {
      dirty = true
      return
    }
    if (change.kind === 'register') {
      await set(change.domain, change.user, Date.now() + change.expiresInS * 1000)
      return
    }
    // One terminal went; the user may have others on this box (sofia_contact is the box's truth).
    const still = await box.isRegistered(change.user, change.domain)
    if (!still.ok) {
      dirty = true
      return
    }
    if (!still.value) await unset(member(change.domain, change.user))
  }

  const resync = async (): Promise<void> => {
    resyncQueued = false
    if (stopped || !conn.isReady()) return
    const listed = await box.list()
    if (!listed.ok) {
      dirty = true
      logger.debug({ err: listed.error }, 'the box registrations could not be read; retried')
      return
    }
    dirty = false
    const wanted = new Map(listed.value.map((r) => [member(r.domain, r.user), r]))
    const published = await redis.smembers(regKeys.node(nodeId))
    const tx = redis.multi()
    for (const m of published) {
      if (wanted.has(m)) continue
      const colon = m.indexOf(':')
      tx.hdel(regKeys.user(m.slice(0, colon), m.slice(colon + 1)), nodeId).srem(regKeys.node(nodeId), m)
    }
    for (const [m, r] of wanted) tx.hset(regKeys.user(r.domain, r.user), nodeId, String(r.expiresAt)).sadd(regKeys.node(nodeId), m)
    await tx.exec()
    logger.debug({ users: wanted.size, removed: published.filter((m) => !wanted.has(m)).length }, 'box registrations published')
  }

  const requestResync = (): void => {
    if (stopped || resyncQueued) return
    resyncQueued = true
    enqueue(resync)
  }

  box.onChange((change) => {
    if (!stopped) enqueue(() => apply(change))
  })
  box.onConnected(requestResync)
  conn.onReady(requestResync)
  requestResync()
  const retry = setInterval(() => {
    if (dirty && conn.isReady()) requestResync()
  }, RETRY_MS)
  retry.unref()

  return {
    async owners(domain, user) {
      if (!conn.isReady()) return []
      try {
        const entries = await redis.hgetall(regKeys.user(domain, user))
        const nodes = Object.keys(entries).filter((n) => n !== nodeId)
        const alive = await Promise.all(nodes.map((n) => redis.exists(deps.keys.lease(n))))
        const dead = nodes.filter((_, i) => alive[i] !== 1)
        // A dead node's entries are dropped here; back, it publishes its box again (resync on reconnection).
        if (dead.length > 0) void redis.hdel(regKeys.user(domain, user), ...dead).catch(() => undefined)
        return nodes.filter((_, i) => alive[i] === 1)
      } catch {
        return []
      }
    },
    settled: async () => {
      let seen: Promise<void>
      do {
        seen = queue
        await seen
      } while (seen !== queue)
    },
    stop() {
      stopped = true
      clearInterval(retry)
    },
  }
}
