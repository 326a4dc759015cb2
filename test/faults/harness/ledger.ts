/**
 * What the clients were told, and the promises checked against it (issue 11):
 * - 0 lost results: every request answered 200 with a callback_url has its result accepted by
 *   the receiver, eventually;
 * - repeats only with the same delivery id: all deliveries of a request carry one X-Delivery-Id,
 *   and the same body bytes;
 * - 0 calls after an error reply: no channel the observer saw carries the request id of a
 *   request answered non-200. Requests whose connection died before any reply (the daemon was
 *   killed mid-request) are "unknown": the client cannot tell, so they are excluded and counted;
 * - live ≤ limit: the observer's peak of the domain's live channels.
 * Each check returns its violations (empty = holds), so a report names every broken request.
 */
import type { EslObserver } from './observer.js'
import type { FaultyReceiver } from './receiver.js'
import { sleep, type FaultStack, type Reply } from './stack.js'

export interface Sent extends Reply {
  readonly op: string
  readonly withCallback: boolean
  readonly sentAt: number
  readonly repliedAt: number
}

export class Ledger {
  readonly sent: Sent[] = []

  record(s: Sent): void {
    this.sent.push(s)
  }

  get accepted(): Sent[] {
    return this.sent.filter((s) => s.status === 200)
  }

  /** Answered with an error: the daemon promised no channel. */
  get errorAnswered(): Sent[] {
    return this.sent.filter((s) => s.status !== 0 && s.status !== 200)
  }

  /** No reply although the request may have reached the daemon (the connection died): excluded from the error-reply check. */
  get unknown(): Sent[] {
    return this.sent.filter((s) => s.status === 0 && s.neverSent !== true)
  }

  /** Connection refused: the daemon was down, the request never reached it. */
  get neverSent(): Sent[] {
    return this.sent.filter((s) => s.neverSent === true)
  }

  statusCounts(): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const s of this.sent) {
      const key = s.neverSent === true ? 'refused (daemon down)' : s.status === 0 ? 'no reply' : s.status === 200 ? '200' : `${s.status} ${s.json?.error?.id ?? '?'}`
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }

  async post(stack: FaultStack, op: string, body: Record<string, unknown>): Promise<Sent> {
    const sentAt = Date.now()
    const reply = await stack.call(op, body)
    const s: Sent = { ...reply, op, withCallback: body.callback_url !== undefined, sentAt, repliedAt: Date.now() }
    this.record(s)
    return s
  }
}

/** Requests answered 200 with a callback whose result the receiver never accepted. */
export function lostResults(ledger: Ledger, receiver: FaultyReceiver): Sent[] {
  const got = receiver.acceptedRequestIds()
  return ledger.accepted.filter((s) => s.withCallback && !got.has(s.requestId))
}

/** Requests delivered under more than one delivery id, or one delivery id with different bodies. */
export function repeatsBroken(receiver: FaultyReceiver): string[] {
  const byRequest = new Map<string, Map<string, Set<string>>>()
  for (const r of receiver.received) {
    const ids = byRequest.get(r.requestId) ?? new Map<string, Set<string>>()
    byRequest.set(r.requestId, ids)
    const bodies = ids.get(r.deliveryId) ?? new Set<string>()
    ids.set(r.deliveryId, bodies)
    bodies.add(r.body)
  }
  const broken: string[] = []
  for (const [requestId, ids] of byRequest) {
    if (ids.size > 1) broken.push(`${requestId}: ${ids.size} delivery ids (${[...ids.keys()].join(', ')})`)
    for (const [deliveryId, bodies] of ids) if (bodies.size > 1) broken.push(`${requestId}: delivery ${deliveryId} sent ${bodies.size} different bodies`)
  }
  return broken
}

/** Requests answered with an error that got a channel anyway. */
export function errorRepliesRung(ledger: Ledger, observer: EslObserver): Sent[] {
  return ledger.errorAnswered.filter((s) => s.requestId !== '' && observer.rungRequestIds.has(s.requestId))
}

/** How many results arrived more than once (same delivery id: allowed, at least once). */
export function duplicateDeliveries(receiver: FaultyReceiver): number {
  const seen = new Map<string, number>()
  for (const r of receiver.received) if (r.status >= 200 && r.status < 300) seen.set(r.deliveryId, (seen.get(r.deliveryId) ?? 0) + 1)
  return [...seen.values()].filter((n) => n > 1).length
}

export const describe = (s: Sent): string =>
  `${s.requestId || '(no id)'} ${s.op} → ${s.status}${s.json?.error !== undefined ? ` ${s.json.error.id}: ${s.json.error.description ?? ''}` : ''}`

/**
 * A steady load: `workers` clients each posting one request after the other until `stop()`
 * says so. A client that got no reply (daemon down) pauses a little, as a real one would.
 */
export async function runLoad(
  stack: FaultStack,
  ledger: Ledger,
  o: { workers: number; stop: () => boolean; request: (i: number) => { op: string; body: Record<string, unknown> }; pauseMs?: number },
): Promise<void> {
  let n = 0
  await Promise.all(
    Array.from({ length: o.workers }, async () => {
      while (!o.stop()) {
        const { op, body } = o.request(n++)
        const s = await ledger.post(stack, op, body)
        if (s.neverSent === true) await sleep(100)
        else if (s.status === 0 || s.status === 503) await sleep(50)
        else if (o.pauseMs !== undefined) await sleep(o.pauseMs)
      }
    }),
  )
}
