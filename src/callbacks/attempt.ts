/**
 * One delivery attempt: one signed HTTP POST of a result's fixed body, and what its answer
 * means. Everything it needs comes in as values (no queue, no timers, no dispatcher state), and
 * it never throws: whatever happens becomes an AttemptOutcome. That keeps the attempt the seam
 * where a durable journal can record each try without knowing how deliveries are scheduled.
 */
import { signatureHeader } from './body.js'
import { classifyStatus, describeError, type AttemptOutcome, type Target } from './policy.js'

export const DEFAULT_USER_AGENT = 'fs-call-originator/0.1 (result-callback)'

/** Bytes of a receiver's reply kept for the logs. */
const SNIPPET_BYTES = 512

/** The delivery being tried, as far as the request needs it. */
export interface AttemptRequest {
  readonly deliveryId: string
  readonly requestId: string
  /** 1 for the first attempt of the delivery (sent as X-Delivery-Attempt). */
  readonly attempt: number
  readonly target: Target
  /** The exact bytes every attempt sends (and signs). */
  readonly body: string
  /** The domain's callback_secret; undefined or empty: not signed. */
  readonly secret: string | undefined
}

export interface AttemptContext {
  readonly timeoutMs: number
  /** Aborts the attempt early (the shutdown deadline). */
  readonly signal: AbortSignal
  /** Wall clock (ms): the signature timestamp, Retry-After dates. */
  readonly now: () => number
  readonly userAgent: string
}

/** The request headers of one attempt; the signature carries this attempt's own timestamp. */
export function attemptHeaders(req: AttemptRequest, nowMs: number, userAgent: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-delivery-id': req.deliveryId,
    'x-delivery-attempt': String(req.attempt),
    'x-request-id': req.requestId,
  }
  if (req.target.authorization !== undefined) h['authorization'] = req.target.authorization
  // Signed per attempt with the attempt's own timestamp, so receivers can refuse stale replays.
  if (req.secret !== undefined && req.secret !== '') h['x-signature'] = signatureHeader(req.secret, Math.floor(nowMs / 1000), req.body)
  return h
}

/** Sends the attempt; connection errors, timeouts and aborts come back as a `retry` outcome. */
export async function attemptDelivery(req: AttemptRequest, ctx: AttemptContext): Promise<AttemptOutcome> {
  try {
    const signal = AbortSignal.any([AbortSignal.timeout(ctx.timeoutMs), ctx.signal])
    const res = await fetch(req.target.href, {
      method: 'POST',
      headers: attemptHeaders(req, ctx.now(), ctx.userAgent),
      body: req.body,
      redirect: 'manual',
      signal,
    })
    const outcome = classifyStatus(res.status, res.headers.get('retry-after'), ctx.now())
    // Reading a short reply lets the connection be reused and gives the logs the receiver's words.
    const reply = await readSnippet(res)
    return outcome.kind !== 'delivered' && reply !== '' ? { ...outcome, reason: `${outcome.reason}: ${reply}` } : outcome
  } catch (e) {
    return { kind: 'retry', reason: describeError(e) }
  }
}

/** Up to SNIPPET_BYTES of the reply; errors while reading are ignored (the status decided). */
async function readSnippet(res: Response): Promise<string> {
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let n = 0
  try {
    while (n < SNIPPET_BYTES) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      n += value.byteLength
    }
    if (n >= SNIPPET_BYTES) await reader.cancel()
  } catch {
    // Reset or timeout while reading the reply: the status already decided the outcome.
  }
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8').trim()
}
