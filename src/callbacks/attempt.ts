/**
 * One delivery attempt: one signed HTTP POST of a result's fixed body, and what its answer
 * means. Everything it needs comes in as values (no queue, no timers, no dispatcher state), and
 * it never throws: whatever happens becomes an AttemptOutcome. That keeps the attempt the seam
 * where a durable journal can record each try without knowing how deliveries are scheduled.
 */
import type { OutboundTransport } from '../net/transport.js'
import { signatureHeader } from './body.js'
import { classifyStatus, describeError, type AttemptOutcome, type Target } from './policy.js'

export const DEFAULT_USER_AGENT = 'fs-call-originator/0.1 (result-callback)'

/** Bytes of a receiver's reply kept for the logs. */
const SNIPPET_BYTES = 512
/** Bytes of a reply read at most (replies are short; reading them whole keeps the connection). */
const REPLY_BYTES = 16 * 1024

/** The delivery being tried, as far as the request needs it. */
export interface AttemptRequest {
  readonly deliveryId: string
  readonly requestId: string
  /** 1 for the first attempt of the delivery (sent as X-Delivery-Attempt). */
  readonly attempt: number
  readonly target: Target
  /** The exact bytes every attempt sends (and signs). */
  readonly body: string
  /** The domain's callback_secret (a ticket notice: its webhook's); undefined or empty: not signed. */
  readonly secret: string | undefined
  /** A notice's kind (journal/types.ts NoticeFields), sent as X-Cod-Notice; absent for a result. */
  readonly notice?: string
}

export interface AttemptContext {
  readonly timeoutMs: number
  /** Aborts the attempt early (the shutdown deadline). */
  readonly signal: AbortSignal
  /** Wall clock (ms): the signature timestamp, Retry-After dates. */
  readonly now: () => number
  readonly userAgent: string
  /** The callbacks' outbound transport (callbacks.allow): transport.ts. */
  readonly transport: OutboundTransport
}

/**
 * The request headers of one attempt; the signature carries this attempt's own timestamp.
 * @internal Exported for tests: test/openapi checks they match the documented headers.
 */
export function attemptHeaders(req: AttemptRequest, nowMs: number, userAgent: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-delivery-id': req.deliveryId,
    'x-delivery-attempt': String(req.attempt),
    'x-request-id': req.requestId,
  }
  if (req.notice !== undefined) h['x-cod-notice'] = req.notice
  if (req.target.authorization !== undefined) h['authorization'] = req.target.authorization
  // Signed per attempt with the attempt's own timestamp, so receivers can refuse stale replays.
  if (req.secret !== undefined && req.secret !== '') h['x-signature'] = signatureHeader(req.secret, Math.floor(nowMs / 1000), req.body)
  return h
}

/**
 * Sends the attempt through the callbacks' transport (src/net/transport.ts: resolve once,
 * every address checked against the guard and `callbacks.allow`, connection pinned, pooled
 * per receiver origin). A refused address is `fatal` (a dead letter: retrying cannot make a
 * refused host acceptable, and a host name that resolves to an internal address must not be
 * hammered for a day); connection errors, DNS failures, timeouts and aborts are a `retry`.
 */
export async function attemptDelivery(req: AttemptRequest, ctx: AttemptContext): Promise<AttemptOutcome> {
  try {
    const res = await ctx.transport.request({
      url: new URL(req.target.href),
      method: 'POST',
      headers: attemptHeaders(req, ctx.now(), ctx.userAgent),
      body: req.body,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      // Reading the reply to its end lets the connection be reused; a longer one is cut (and
      // its connection closed): only the first SNIPPET_BYTES reach the logs anyway.
      maxBytes: REPLY_BYTES,
      overflow: 'truncate',
    })
    if (!res.ok) {
      const e = res.error
      if (e.kind === 'refused') return { kind: 'fatal', reason: `address refused: ${e.message}` }
      return { kind: 'retry', reason: e.kind === 'timeout' ? 'timeout' : e.kind === 'aborted' ? 'aborted' : e.message }
    }
    const outcome = classifyStatus(res.value.status, res.value.headers['retry-after'] ?? null, ctx.now())
    const reply = res.value.body.subarray(0, SNIPPET_BYTES).toString('utf8').trim()
    return outcome.kind !== 'delivered' && reply !== '' ? { ...outcome, reason: `${outcome.reason}: ${reply}` } : outcome
  } catch (e) {
    return { kind: 'retry', reason: describeError(e) }
  }
}
