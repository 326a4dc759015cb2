/**
 * Idempotency-Keys across the nodes (docs/cluster.md "Idempotency keys"): the API's own store
 * (src/api/idempotency.ts) asks this after its local check, so a client retrying through the load
 * balancer onto another node gets the same reply, and never a second call.
 *
 * One Redis key per (domain, key): `SET NX` with the body digest while the first request is being
 * placed (`PENDING_TTL_MS`: a node that dies meanwhile frees it), then the 200 reply for 24 h. A
 * repeat with the same digest waits while it is pending elsewhere and then replays the reply;
 * another digest is a conflict (409). Redis unreachable: 503 `cluster_unavailable`.
 */
import { createHash } from 'node:crypto'
import type { SharedClaim, SharedIdempotency } from '../api/idempotency.js'
import { IDEMPOTENCY_TTL_MS } from '../journal/types.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'

/** A first request's placing takes at most the originate's acceptance (freeswitch.command_timeout_ms) and a journal write. */
const PENDING_TTL_MS = 60_000
/** A repeat waits this long for a request pending on another node, then gets 503. */
const WAIT_MS = 20_000
const POLL_MS = 100

interface Stored {
  readonly digest: string
  readonly rid: string
  readonly reply?: string
}

const CLAIM_LUA = `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`

const FREE_LUA = `local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).rid == ARGV[1] and not cjson.decode(v).reply then redis.call('DEL', KEYS[1]) end
return 1`

export function sharedIdempotency(conn: ClusterConnection, prefix: string, logger: Logger): SharedIdempotency {
  const keyOf = (domain: string, key: string): string =>
    `${prefix}:idem:${domain.toLowerCase()}:${createHash('sha256').update(key).digest('hex')}`

  const claim = async (domain: string, key: string, digest: string, requestId: string): Promise<SharedClaim> => {
    const k = keyOf(domain, key)
    const mine = JSON.stringify({ digest, rid: requestId } satisfies Stored)
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      let found: string | null
      try {
        found = (await conn.redis.eval(CLAIM_LUA, 1, k, mine, PENDING_TTL_MS)) as string | null
      } catch (e) {
        return { kind: 'unavailable', description: (e as Error).message }
      }
      if (found === null) return { kind: 'new' }
      const s = JSON.parse(found) as Stored
      if (s.digest !== digest) return { kind: 'conflict' }
      if (s.reply !== undefined) return { kind: 'replay', reply: s.reply, requestId: s.rid }
      if (Date.now() > deadline) return { kind: 'unavailable', description: 'the first request with this key is still being placed on another node' }
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  }

  return {
    claim,
    settle(domain, key, digest, requestId, reply) {
      const k = keyOf(domain, key)
      const done =
        reply === undefined
          ? conn.redis.eval(FREE_LUA, 1, k, requestId)
          : conn.redis.set(k, JSON.stringify({ digest, rid: requestId, reply } satisfies Stored), 'PX', IDEMPOTENCY_TTL_MS)
      done.catch((e: unknown) => logger.warn({ err: (e as Error).message, requestId }, 'Idempotency-Key not written to the cluster (Redis unreachable): a repeat on another node may be placed again'))
    },
  }
}
