/**
 * One URL fetched to its end: the call parameters sent form-encoded (the POST body, or after
 * the URL's own query for a GET), every redirect hop sent as a new request through the one
 * transport, which resolves and checks its host again like the first (at most `maxRedirects`,
 * relative Location resolved against the hop's URL, only http/https targets), all under one
 * overall timeout that covers DNS, connect, redirects and the body.
 */
import { performance } from 'node:perf_hooks'
import { err, ok, type Result } from '../../util/result.js'
import { fetchError, type FetchError } from './errors.js'
import { requestOnce } from './request.js'
import type { HttpMethod, HttpSettings } from './types.js'
import { parseHttpUrl, redact } from './urls.js'

/** A 2xx answer's bytes and where they came from. */
export interface RawAnswer {
  /** After redirects, without the call parameters a GET appended; user info kept. */
  readonly finalUrl: string
  readonly status: number
  readonly contentType: string
  readonly bytes: Buffer
}

export async function fetchUrl(
  raw: string,
  params: Readonly<Record<string, string>>,
  method: HttpMethod,
  acceptHeader: string,
  s: HttpSettings,
): Promise<Result<RawAnswer, FetchError>> {
  const first = parseHttpUrl(raw)
  if (!first.ok) return first
  const form = new URLSearchParams(params).toString()
  let url = first.value
  // The answer's URL as the document should see it: without the call parameters we appended.
  let answerUrl = first.value
  let body: string | undefined
  if (method === 'POST') body = form
  else if (form !== '') {
    // Keep the URL's own query as written; the call parameters follow it.
    url = new URL(url.href)
    url.search = url.search === '' || url.search === '?' ? form : `${url.search.slice(1)}&${form}`
  }
  const deadline = performance.now() + s.timeoutMs
  for (let redirects = 0; ; redirects++) {
    const budgetMs = deadline - performance.now()
    if (budgetMs <= 0) return err(fetchError('timeout', redact(answerUrl), `no complete answer within ${s.timeoutMs} ms`))
    const hop = await requestOnce({ url, method, body, acceptHeader, budgetMs }, s)
    // Errors name the URL as given (without the call parameters a GET appended).
    if (!hop.ok) return err({ ...hop.error, url: redact(answerUrl) })
    if (hop.value.kind === 'body') {
      return ok({ finalUrl: answerUrl.href, status: hop.value.status, contentType: hop.value.contentType, bytes: hop.value.bytes })
    }
    if (redirects >= s.maxRedirects) {
      return err(fetchError('too_many_redirects', redact(answerUrl), `more than ${s.maxRedirects} redirects`))
    }
    const next = parseHttpUrl(hop.value.location, url)
    if (!next.ok) {
      return err(fetchError('bad_url', next.error.url, `redirect (HTTP ${hop.value.status}) from ${redact(answerUrl)}: ${next.error.message}`))
    }
    // As browsers and curl do: 303 always, and 301/302 after a POST, continue as a GET
    // without the body; 307/308 repeat the request as it was.
    const status = hop.value.status
    if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET'
      body = undefined
    }
    url = next.value
    answerUrl = next.value
  }
}

/** Whether a URL passes the rules without fetching it: http/https, every address allowed (same timeout). */
export async function checkUrlTarget(raw: string, s: HttpSettings): Promise<Result<void, FetchError>> {
  const url = parseHttpUrl(raw)
  if (!url.ok) return url
  const r = await s.transport.check(url.value.href, s.timeoutMs)
  if (r.ok) return ok(undefined)
  const kind = r.error.kind === 'refused' ? 'blocked_address' : r.error.kind === 'timeout' ? 'timeout' : 'network'
  return err(fetchError(kind, redact(url.value), r.error.message))
}
