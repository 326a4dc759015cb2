/**
 * Registrations everywhere (docs/cluster.md "Registrations everywhere"): a call_user whose user
 * has no terminal on this node's box is handed to the nodes whose box has it, as published in
 * Redis (registrations.ts), and then, when none of them placed it, to the other nodes alive, one
 * after the other (asking: the published view may lag, or be empty just after Redis restarted).
 * Each is sent the client's own body and credentials and `X-Cod-Forwarded` (the node reached
 * answers from its own box and never forwards again). The first reply that is not
 * `user_not_registered` is returned to the client as it is; that node placed the call and owns it
 * (limit, legs, result, recovery), as a single node would. An Idempotency-Key is not forwarded:
 * this node keeps it, with the reply it returns.
 *
 * Only a node that refused the connection (the request never reached it) is passed over for the
 * next. A node that may have received the request and did not answer (a timeout, a reset) may
 * have placed the call: asking another node could ring the user twice, so the client is answered
 * `503 cluster_unavailable` naming the node (docs/cluster.md "Registrations everywhere").
 */
import type { ForwardedReply, ForwardedRequest } from '../api/app.js'
import { FORWARDED_HEADER } from '../api/app.js'
import { apiError, errorBody, statusOf } from '../api/errors.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'

/** A node asked gets this long to answer (its sofia_contact and originate's acceptance). */
const FORWARD_TIMEOUT_MS = 10_000

export interface ForwardDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  /** The API prefix (`http.prefix`): the same on every node. */
  readonly prefix: () => string
  readonly logger: Logger
  /** How long a node asked may take; default FORWARD_TIMEOUT_MS. */
  readonly timeoutMs?: number
  /** The other nodes alive whose box published the user (registrations.ts): asked first. */
  readonly owners?: (domain: string, user: string) => Promise<readonly string[]>
}

export function forwarder(deps: ForwardDeps): (req: ForwardedRequest) => Promise<ForwardedReply | undefined> {
  const { conn, keys } = deps
  return async (req) => {
    if (!conn.isReady()) return undefined
    let nodes: Record<string, string>
    try {
      nodes = await conn.redis.hgetall(keys.nodes)
    } catch {
      return undefined
    }
    // No view (Redis unreadable, nothing published yet): every node is asked, as before the publication.
    const owners = req.userName !== undefined && deps.owners !== undefined ? await deps.owners(req.domain, req.userName).catch(() => []) : []
    // The published owners first (their leases checked by owners()), then every other node.
    const order = [...owners.filter((n) => nodes[n] !== undefined), ...Object.keys(nodes).filter((n) => !owners.includes(n))]
    for (const node of order) {
      const apiUrl = nodes[node] as string
      if (node === deps.nodeId) continue
      if (!owners.includes(node)) {
        const alive = await conn.redis.exists(keys.lease(node)).catch(() => 0)
        if (alive !== 1) continue
      }
      try {
        const res = await fetch(`${apiUrl.replace(/\/+$/, '')}${deps.prefix()}/${req.operation}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: req.authorization, [FORWARDED_HEADER]: deps.nodeId },
          body: JSON.stringify(req.body),
          signal: AbortSignal.timeout(deps.timeoutMs ?? FORWARD_TIMEOUT_MS),
        })
        const body = await res.text()
        if (res.status === 409 && /"id":"user_not_registered"/.test(body)) continue
        deps.logger.info({ requestId: req.requestId, node, status: res.status, published: owners.includes(node) }, 'call_user forwarded to the node whose box has the user')
        return { status: res.status, body }
      } catch (e) {
        const code = ((e as Error).cause as { code?: string } | undefined)?.code
        if (code === 'ECONNREFUSED') {
          deps.logger.warn({ requestId: req.requestId, node }, 'a node refused the forwarded call_user; asking the next')
          continue
        }
        deps.logger.error({ requestId: req.requestId, node, err: (e as Error).message }, 'a forwarded call_user got no reply: it may have been placed there')
        const refusal = apiError('cluster_unavailable', `node ${node} did not answer the forwarded request (${(e as Error).message}); the call may have been placed there: look for it before trying again`)
        return { status: statusOf(refusal), body: JSON.stringify(errorBody(refusal)) }
      }
    }
    return undefined
  }
}
