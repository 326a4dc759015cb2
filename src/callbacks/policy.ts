/**
 * Retry policy of result callbacks, as pure functions (docs/design.md "Result callbacks"):
 * retried on connection errors, timeouts, 5xx and 429; not on other 4xx nor on 3xx
 * (redirects are not followed: a callback URL that moved is a configuration error of the
 * receiver, and following it would re-send a signed result to a host nobody configured).
 */
import { err, ok, type Result } from '../util/result.js'
import type { CallbackSettings } from './types.js'

/** The settings the delays depend on. */
export type Backoff = Pick<CallbackSettings, 'backoff_initial_ms' | 'backoff_max_ms'>

export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'retry'; readonly reason: string; readonly status?: number; readonly retryAfterMs?: number }
  /** Final: the receiver refused for good (status), or the address is refused by policy (no status). */
  | { readonly kind: 'fatal'; readonly reason: string; readonly status?: number }

/** What one HTTP status means for the delivery. */
export function classifyStatus(status: number, retryAfter: string | null, nowMs: number): AttemptOutcome {
  if (status >= 200 && status <= 299) return { kind: 'delivered', status }
  if (status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter, nowMs)
    const reason = `HTTP ${status}`
    return retryAfterMs === undefined ? { kind: 'retry', reason, status } : { kind: 'retry', reason, status, retryAfterMs }
  }
  if (status >= 300 && status <= 399) return { kind: 'fatal', reason: `HTTP ${status} (redirects are not followed)`, status }
  return { kind: 'fatal', reason: `HTTP ${status}`, status }
}

/**
 * Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date; anything else is ignored.
 * @internal Exported for tests: test/callbacks checks the header forms one by one.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined
  const v = value.trim()
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000
  // Date.parse accepts many forms; an HTTP-date always names a weekday and GMT.
  if (!/GMT$/.test(v)) return undefined
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

/**
 * Delay before retry number `retry` (1 = the retry after the first failed attempt):
 * exponential from backoff_initial_ms, capped at backoff_max_ms, with "equal jitter" (half
 * fixed, half random) so that receivers coming back up are not hit by every sender at once
 * while the delay still grows.
 * @internal Exported for tests: test/callbacks checks the schedule without waiting it out.
 */
export function backoffDelay(retry: number, s: Backoff, random: () => number): number {
  const exp = s.backoff_initial_ms * 2 ** Math.min(Math.max(retry - 1, 0), 30)
  const cap = Math.min(s.backoff_max_ms, exp)
  const r = Math.min(Math.max(random(), 0), 1)
  return Math.round(cap / 2 + (r * cap) / 2)
}

/** The delay actually used: never earlier than the receiver asked (Retry-After), never past backoff_max_ms. */
export function retryDelay(retry: number, s: Backoff, random: () => number, retryAfterMs?: number): number {
  const backoff = backoffDelay(retry, s, random)
  return retryAfterMs === undefined ? backoff : Math.min(s.backoff_max_ms, Math.max(backoff, retryAfterMs))
}

export interface Target {
  /** What fetch is called with: the URL without user information. */
  readonly href: string
  /** From `https://user:pass@host/...`: fetch refuses URLs with credentials, so they become Basic auth. */
  readonly authorization?: string
  /** For logs: scheme, host and path only (user information and query can hold secrets). */
  readonly logUrl: string
}

export function parseTarget(url: string): Result<Target, string> {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return err('callback_url is not a URL')
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return err(`callback_url scheme ${u.protocol} is not http or https`)
  const logUrl = `${u.origin}${u.pathname}`
  if (u.username === '' && u.password === '') return ok({ href: u.href, logUrl })
  let user: string
  let pass: string
  try {
    user = decodeURIComponent(u.username)
    pass = decodeURIComponent(u.password)
  } catch {
    return err('callback_url user information is not valid percent-encoding')
  }
  u.username = ''
  u.password = ''
  return ok({ href: u.href, authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`, logUrl })
}

/** A short, log-safe description of a fetch failure (undici hides the cause in `cause`). */
export function describeError(e: unknown): string {
  if (e instanceof Error) {
    if (e.name === 'TimeoutError') return 'timeout'
    if (e.name === 'AbortError') return 'aborted'
    const cause: unknown = (e as { cause?: unknown }).cause
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code
      return `${e.message}: ${typeof code === 'string' ? code : cause.message}`
    }
    return e.message
  }
  return String(e)
}
