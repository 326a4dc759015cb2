/**
 * The callback body and its signature.
 *
 * The body is exactly the interface's callback notification (docs/interface.md "Result
 * callback"); everything else (delivery id, timestamp, signature) travels in headers
 * (docs/design.md "Lessons from FreeSWITCH"), so that receivers written against the interface keep
 * working. The body is serialised once per result: every attempt sends the same bytes, which
 * is what the signature covers.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { CallResult } from './types.js'

/**
 * Serialises only the fields the interface defines, in a fixed order, whatever else the
 * object carries at run time (nothing internal may leak to a third-party receiver).
 */
export function callbackBody(result: CallResult): string {
  if (result.result_code === 0) return JSON.stringify({ result_code: 0, uuid: result.uuid })
  return JSON.stringify({ result_code: 500, error: { id: result.error.id, cause: result.error.cause } })
}

/** The exact string signed: `<t>.<body>`, t in unix seconds. */
const signedPayload = (timestampSec: number, body: string): string => `${timestampSec}.${body}`

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>` */
export function signatureHeader(secret: string, timestampSec: number, body: string): string {
  const mac = createHmac('sha256', secret).update(signedPayload(timestampSec, body), 'utf8').digest('hex')
  return `t=${timestampSec},v1=${mac}`
}

/**
 * Reference verification, as a receiver should do it (docs/callbacks.md): recompute the MAC
 * over the raw body bytes, compare in constant time, and refuse stale timestamps (replay).
 * @internal Exported for tests: the receiving side of the signature, for test/callbacks.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  rawBody: string,
  opts: { nowSec: number; toleranceSec?: number },
): boolean {
  if (header === undefined) return false
  const parts = new Map<string, string>()
  for (const kv of header.split(',')) {
    const i = kv.indexOf('=')
    if (i > 0) parts.set(kv.slice(0, i).trim(), kv.slice(i + 1).trim())
  }
  const t = parts.get('t')
  const v1 = parts.get('v1')
  if (t === undefined || v1 === undefined || !/^\d{1,12}$/.test(t) || !/^[0-9a-f]{64}$/.test(v1)) return false
  if (Math.abs(opts.nowSec - Number(t)) > (opts.toleranceSec ?? 300)) return false
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest()
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'))
}
