/**
 * One HTTP exchange of an IVR fetch, through the daemon's one outbound transport
 * (src/net/transport.ts), which resolves the host once, checks every address, pins the
 * connection to the checked ones, caps the body and ends the exchange at its deadline. This
 * adds what is the IVR's: user info of the URL as Basic auth, the Accept header, the form body,
 * and what an answer means: a redirect is returned for the caller to check and follow; any
 * other non-2xx status, and a compressed body, are failures.
 */
import { err, ok, type Result } from '../../util/result.js'
import type { OutboundError } from '../../net/outbound-error.js'
import { bareHostname } from '../../net/policy.js'
import { fetchError, type FetchError, type FetchErrorKind } from './errors.js'
import type { HttpMethod, HttpSettings } from './types.js'
import { redact } from './urls.js'

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** What one request gave: a redirect to follow, or a 2xx body. */
export type Hop =
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  | { readonly kind: 'body'; readonly status: number; readonly contentType: string; readonly bytes: Buffer }

export interface HopRequest {
  readonly url: URL
  readonly method: HttpMethod
  /** The form-encoded POST body; undefined for a GET. */
  readonly body: string | undefined
  readonly acceptHeader: string
  /** What is left of the URL's overall timeout (DNS, connect, redirects and body). */
  readonly budgetMs: number
}

const KINDS: Record<OutboundError['kind'], FetchErrorKind> = {
  refused: 'blocked_address',
  bad_url: 'bad_url',
  dns: 'network',
  timeout: 'timeout',
  aborted: 'timeout',
  too_large: 'too_large',
  network: 'network',
}

/** The transport's failure in the fetcher's words; timeouts name the URL's whole budget. */
function fetchErrorOf(e: OutboundError, url: URL, s: HttpSettings): FetchError {
  const shown = redact(url)
  if (e.kind === 'timeout' && e.phase === 'resolving') {
    return fetchError('timeout', shown, `no answer within ${s.timeoutMs} ms (resolving ${bareHostname(url.hostname)})`)
  }
  if (e.kind === 'timeout' || e.kind === 'aborted') return fetchError('timeout', shown, `no complete answer within ${s.timeoutMs} ms`)
  return fetchError(KINDS[e.kind], shown, e.message)
}

export async function requestOnce(r: HopRequest, s: HttpSettings): Promise<Result<Hop, FetchError>> {
  const { url, method, body, acceptHeader } = r
  const headers: Record<string, string> = { 'user-agent': s.userAgent, accept: acceptHeader }
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
  let target = url
  if (url.username !== '' || url.password !== '') {
    let user: string
    let pass: string
    try {
      user = decodeURIComponent(url.username)
      pass = decodeURIComponent(url.password)
    } catch {
      return err(fetchError('bad_url', redact(url), 'user information is not valid percent-encoding'))
    }
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
    target = new URL(redact(url))
  }
  const res = await s.transport.request({
    url: target,
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    timeoutMs: Math.max(1, r.budgetMs),
    maxBytes: s.maxBytes,
    overflow: 'fail',
  })
  if (!res.ok) return err(fetchErrorOf(res.error, url, s))
  const { status, headers: h } = res.value
  const shown = redact(url)
  const location = h.location
  if (REDIRECTS.has(status) && location !== undefined) return ok({ kind: 'redirect', status, location })
  if (status < 200 || status > 299) {
    return err(fetchError('http_status', shown, `HTTP ${status}${res.value.statusText !== '' ? ` ${res.value.statusText}` : ''}`, status))
  }
  const encoding = h['content-encoding']
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return err(fetchError('invalid_body', shown, `unsupported Content-Encoding "${encoding.slice(0, 40)}"`))
  }
  return ok({ kind: 'body', status, contentType: h['content-type'] ?? '', bytes: res.value.body })
}
