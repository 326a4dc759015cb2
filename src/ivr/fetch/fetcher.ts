/**
 * Fetches IVR documents and GetJSON data from application servers, under the fetch rules of
 * spec/ivr-xml.md ("Fetch rules") and DESIGN.md "Security rules":
 *
 * - http/https only; every redirect hop is checked again (at most `maxRedirects`, relative
 *   Location resolved against the hop's URL, only http/https targets);
 * - the host is resolved here (all addresses), EVERY address must pass the address guard, and
 *   the connection is pinned to the checked addresses through the request's `lookup` hook, so a
 *   DNS answer that changes between check and connect (DNS rebinding) cannot redirect it. The
 *   Host header and the TLS server name (SNI and certificate check) stay the URL's host name;
 * - one overall timeout per URL (DNS, connect, redirects and body), a body size cap (aborted as
 *   soon as it is passed), non-2xx is a failure;
 * - parameters are sent form-encoded: POST body `application/x-www-form-urlencoded`, or the
 *   query string for GET.
 *
 * Failures are values (FetchError) with a kind and a message fit for logs and for the
 * `Error=` parameter reported back to the document's URL.
 */
import http from 'node:http'
import https from 'node:https'
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { TextDecoder } from 'node:util'
import type { Logger } from '../../util/logger.js'
import { ok, err, type Result } from '../../util/result.js'
import { checkAddress, type Cidr } from '../../net/address-guard.js'
import { ABORTED, raceAbort } from '../../util/abort.js'

export type FetchErrorKind =
  | 'blocked_address'
  | 'bad_url'
  | 'timeout'
  | 'too_large'
  | 'http_status'
  | 'too_many_redirects'
  | 'network'
  | 'invalid_body'

export interface FetchError {
  readonly kind: FetchErrorKind
  /** One line, no secrets (user info is stripped from URLs): fit for logs and `Error=`. */
  readonly message: string
  /** The URL that failed (credentials stripped); for a fallback list, the last one tried. */
  readonly url: string
  /** The HTTP status, for `http_status`. */
  readonly status?: number
  /** For a fallback list: the failure of every URL tried, in order. */
  readonly attempts?: readonly FetchError[]
}

export type HttpMethod = 'POST' | 'GET'

export interface FetchedDocument {
  /**
   * The URL the body came from, after redirects: the base for relative URLs in the document.
   * Keeps any user info of the URL (so relative URLs keep working): redact before logging.
   */
  readonly url: string
  /** The entry of the fallback list that led to it. */
  readonly requestedUrl: string
  readonly body: string
  /** The Content-Type header as sent ('' when absent). */
  readonly contentType: string
}

export interface IvrFetcher {
  /**
   * Try `urls` in order (the comma list of `action`/`failureAction`, already split: see
   * splitUrlList) until one answers 2xx with a body that `accept` takes.
   */
  fetchDocument(
    urls: readonly string[],
    params: Readonly<Record<string, string>>,
    method?: HttpMethod,
  ): Promise<Result<FetchedDocument, FetchError>>
  /**
   * Whether a URL that FreeSWITCH itself will fetch (a `<Play>` prompt through mod_http_cache)
   * passes the same rules: http/https, and every address its host resolves to allowed. The
   * daemon cannot pin FreeSWITCH's connection, so this is a check, not a guarantee against a
   * host whose DNS answer changes in between.
   */
  checkTarget(url: string): Promise<Result<void, FetchError>>
  /** GetJSON: a 2xx answer whose body parses as JSON. */
  fetchJson(url: string, params: Readonly<Record<string, string>>, method?: HttpMethod): Promise<Result<unknown, FetchError>>
  /**
   * Tell a document's URL that it failed: POST the params with `CallStatus=error` and
   * `Error=<error>` (when given; else params.Error is kept). Best effort: never throws, the
   * answer is ignored, failures are logged.
   */
  reportError(url: string, params: Readonly<Record<string, string>>, error?: string): Promise<void>
}

export interface FetcherOptions {
  /** Operator allow-list (`ivr.fetch_allow`, parsed with parseCidrList). */
  readonly allow: readonly Cidr[]
  /** Per URL, covering DNS, connect, redirects and the body. Default 5000. */
  readonly timeoutMs?: number
  /** Largest body accepted. Default 256 KiB. */
  readonly maxBytes?: number
  /** Redirects followed per URL. Default 3. */
  readonly maxRedirects?: number
  /** Host name to addresses; default dns.lookup (all addresses). Tests inject one. */
  readonly lookup?: (host: string) => Promise<string[]>
  /**
   * fetchDocument only: validates a 2xx body (e.g. parse it as an IVR document). An error
   * makes the URL fail with `invalid_body` and the next URL of the list is tried.
   */
  readonly accept?: (body: string, contentType: string) => Result<unknown, string>
  /** Trusted CA certificates for https; replaces the default roots (private IVR servers, tests). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  readonly userAgent?: string
  readonly logger: Logger
}

/** Split a comma list of URLs ("a, b,c") into its entries; empty entries are dropped. */
export const splitUrlList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)

const DEFAULTS = { timeoutMs: 5000, maxBytes: 256 * 1024, maxRedirects: 3 }
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** A URL without its user info, for messages and logs. */
const redact = (url: URL): string => {
  if (url.username === '' && url.password === '') return url.href
  const copy = new URL(url.href)
  copy.username = ''
  copy.password = ''
  return copy.href
}

const redactRaw = (raw: string): string => {
  try {
    return redact(new URL(raw))
  } catch {
    // Not a URL: cut anything that looks like user info and keep it short.
    return raw.replace(/\/\/[^/@]*@/, '//').slice(0, 200)
  }
}

const fail = (kind: FetchErrorKind, url: string, message: string, status?: number): FetchError =>
  status === undefined ? { kind, url, message } : { kind, url, message, status }

const parseHttpUrl = (raw: string, base?: URL): Result<URL, FetchError> => {
  let url: URL
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base)
  } catch {
    return err(fail('bad_url', redactRaw(raw), `not a valid URL: ${JSON.stringify(redactRaw(raw).slice(0, 100))}`))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return err(fail('bad_url', redact(url), `scheme ${url.protocol} is not allowed (http and https only)`))
  }
  if (url.hostname === '') return err(fail('bad_url', redact(url), 'URL has no host'))
  return ok(url)
}

/** URL.hostname keeps IPv6 literals in brackets; requests and lookups want them bare. */
const bareHost = (url: URL): string =>
  url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname

interface PinnedAddress {
  readonly address: string
  readonly family: 4 | 6
}

type PinnedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void

/**
 * The `lookup` hook given to http(s).request: answers with the addresses the guard checked and
 * never asks DNS again. Handles both call forms net uses (`all: true` with autoSelectFamily).
 * Exported for tests.
 */
export const pinnedLookup =
  (addresses: readonly PinnedAddress[]): PinnedLookup =>
  (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
    const first = wanted[0]
    if (first === undefined) {
      const e: NodeJS.ErrnoException = new Error(`no checked address of the requested family for ${hostname}`)
      e.code = 'ENOTFOUND'
      callback(e, '')
      return
    }
    if (options.all === true) callback(null, wanted.map((a) => ({ address: a.address, family: a.family })))
    else callback(null, first.address, first.family)
  }

const defaultLookup = (host: string): Promise<string[]> =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (e, addresses) => {
      if (e !== null) reject(e)
      else resolve(addresses.map((a) => a.address))
    })
  })

type Hop =
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  | { readonly kind: 'body'; readonly status: number; readonly contentType: string; readonly bytes: Buffer }

interface Raw {
  readonly finalUrl: string
  readonly status: number
  readonly contentType: string
  readonly bytes: Buffer
}

const charsetOf = (contentType: string): string | undefined => /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]

/**
 * Bytes to text: a byte order mark wins, then the Content-Type charset, then (documents only)
 * the XML declaration's encoding (Japanese IVR servers may still send Shift_JIS), else UTF-8.
 * Malformed bytes are an error rather than U+FFFD, as an XML parser would refuse them anyway.
 */
export const decodeBody = (bytes: Buffer, contentType: string, sniffXml: boolean): Result<string, string> => {
  let label: string | undefined
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) label = 'utf-8'
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le'
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be'
  label ??= charsetOf(contentType)
  if (label === undefined && sniffXml) {
    const head = bytes.subarray(0, 256).toString('latin1')
    label = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]
  }
  label ??= 'utf-8'
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(label, { fatal: true })
  } catch {
    return err(`unsupported charset "${label.slice(0, 40)}"`)
  }
  try {
    return ok(decoder.decode(bytes))
  } catch {
    return err(`body is not valid ${decoder.encoding}`)
  }
}

export const createFetcher = (opts: FetcherOptions): IvrFetcher => {
  const timeoutMs = opts.timeoutMs ?? DEFAULTS.timeoutMs
  const maxBytes = opts.maxBytes ?? DEFAULTS.maxBytes
  const maxRedirects = opts.maxRedirects ?? DEFAULTS.maxRedirects
  const lookup = opts.lookup ?? defaultLookup
  const userAgent = opts.userAgent ?? 'fs-call-originator-ivr'
  const log = opts.logger

  const resolveChecked = async (url: URL, signal: AbortSignal): Promise<Result<PinnedAddress[], FetchError>> => {
    const host = bareHost(url)
    const shown = redact(url)
    let addresses: string[]
    if (isIP(host) !== 0) {
      addresses = [host]
    } else {
      let answer: string[] | typeof ABORTED
      try {
        answer = await raceAbort(lookup(host), signal)
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))
        return err(fail('network', shown, `cannot resolve ${host}: ${code}`))
      }
      if (answer === ABORTED) return err(fail('timeout', shown, `no answer within ${timeoutMs} ms (resolving ${host})`))
      addresses = answer
    }
    if (addresses.length === 0) return err(fail('network', shown, `cannot resolve ${host}: no address`))
    const pinned: PinnedAddress[] = []
    for (const address of addresses) {
      const v = checkAddress(address, opts.allow)
      if (!v.allowed) {
        const what = address === host ? v.detail : `${host} resolves to ${v.detail}`
        return err(fail('blocked_address', shown, `${what}: not allowed (operator allow-list: ivr.fetch_allow)`))
      }
      const family = isIP(address)
      pinned.push({ address, family: family === 6 ? 6 : 4 })
    }
    return ok(pinned)
  }

  const requestOnce = (
    url: URL,
    addresses: readonly PinnedAddress[],
    method: HttpMethod,
    body: string | undefined,
    acceptHeader: string,
    signal: AbortSignal,
  ): Promise<Result<Hop, FetchError>> =>
    new Promise((resolve) => {
      const shown = redact(url)
      let settled = false
      const headers: Record<string, string> = {
        host: url.host,
        'user-agent': userAgent,
        accept: acceptHeader,
        // No compression: the size cap then counts the bytes that are parsed (no zip bombs).
        'accept-encoding': 'identity',
        connection: 'close',
      }
      if (body !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded'
        headers['content-length'] = String(Buffer.byteLength(body))
      }
      const host = bareHost(url)
      const options: https.RequestOptions = {
        host,
        port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        // A fresh connection per request: a pooled socket would skip the per-request pinning.
        agent: false,
        lookup: pinnedLookup(addresses),
      }
      if (url.username !== '' || url.password !== '') {
        options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      }
      if (url.protocol === 'https:') {
        // SNI and the certificate check use the host name, never the pinned address.
        if (isIP(host) === 0) options.servername = host
        if (opts.ca !== undefined) options.ca = typeof opts.ca === 'string' || Buffer.isBuffer(opts.ca) ? opts.ca : [...opts.ca]
      }
      const finish = (r: Result<Hop, FetchError>): void => {
        if (settled) return
        settled = true
        signal.removeEventListener('abort', onAbort)
        resolve(r)
      }
      const onAbort = (): void => {
        finish(err(fail('timeout', shown, `no complete answer within ${timeoutMs} ms`)))
        req.destroy()
      }
      const req = (url.protocol === 'https:' ? https : http).request(options, (res) => {
        const status = res.statusCode ?? 0
        const location = res.headers.location
        if (REDIRECTS.has(status) && location !== undefined) {
          finish(ok({ kind: 'redirect', status, location }))
          res.destroy()
          return
        }
        if (status < 200 || status > 299) {
          finish(err(fail('http_status', shown, `HTTP ${status}${res.statusMessage ? ` ${res.statusMessage.slice(0, 80)}` : ''}`, status)))
          res.destroy()
          return
        }
        const encoding = res.headers['content-encoding']
        if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
          finish(err(fail('invalid_body', shown, `unsupported Content-Encoding "${encoding.slice(0, 40)}"`)))
          res.destroy()
          return
        }
        const declared = Number(res.headers['content-length'])
        if (Number.isFinite(declared) && declared > maxBytes) {
          finish(err(fail('too_large', shown, `body of ${declared} bytes is larger than ${maxBytes} bytes`)))
          res.destroy()
          return
        }
        const chunks: Buffer[] = []
        let size = 0
        let ended = false
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > maxBytes) {
            finish(err(fail('too_large', shown, `body is larger than ${maxBytes} bytes`)))
            res.destroy()
            return
          }
          chunks.push(chunk)
        })
        res.on('end', () => {
          ended = true
          finish(ok({ kind: 'body', status, contentType: res.headers['content-type'] ?? '', bytes: Buffer.concat(chunks, size) }))
        })
        res.on('error', (e) => finish(err(fail('network', shown, `connection failed while reading the body: ${e.message}`))))
        res.on('close', () => {
          if (!ended) finish(err(fail('network', shown, 'connection closed before the body ended')))
        })
      })
      req.on('error', (e: NodeJS.ErrnoException) => {
        finish(err(fail('network', shown, `${e.code ?? 'error'}: ${e.message}`)))
      })
      if (signal.aborted) {
        onAbort()
        return
      }
      signal.addEventListener('abort', onAbort, { once: true })
      req.end(body)
    })

  /** One entry of a list: all hops under one timeout. */
  const fetchOne = async (
    raw: string,
    params: Readonly<Record<string, string>>,
    method: HttpMethod,
    acceptHeader: string,
  ): Promise<Result<Raw, FetchError>> => {
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
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    try {
      for (let redirects = 0; ; redirects++) {
        // Errors name the URL as given (without the call parameters a GET appended).
        const addresses = await resolveChecked(url, controller.signal)
        if (!addresses.ok) return err({ ...addresses.error, url: redact(answerUrl) })
        const hop = await requestOnce(url, addresses.value, method, body, acceptHeader, controller.signal)
        if (!hop.ok) return err({ ...hop.error, url: redact(answerUrl) })
        if (hop.value.kind === 'body') {
          return ok({ finalUrl: answerUrl.href, status: hop.value.status, contentType: hop.value.contentType, bytes: hop.value.bytes })
        }
        if (redirects >= maxRedirects) {
          return err(fail('too_many_redirects', redact(answerUrl), `more than ${maxRedirects} redirects`))
        }
        const next = parseHttpUrl(hop.value.location, url)
        if (!next.ok) {
          return err(fail('bad_url', next.error.url, `redirect (HTTP ${hop.value.status}) from ${redact(answerUrl)}: ${next.error.message}`))
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
    } finally {
      clearTimeout(timer)
    }
  }

  const logFailure = (e: FetchError, what: string): void => {
    log.warn({ url: e.url, kind: e.kind, status: e.status, reason: e.message }, `ivr fetch failed (${what})`)
  }

  /** The caller's validator; one that throws counts as a refusal, not as a crash of the call. */
  const runAccept = (body: string, contentType: string): Result<unknown, string> | undefined => {
    if (opts.accept === undefined) return undefined
    try {
      return opts.accept(body, contentType)
    } catch (e) {
      return err(e instanceof Error ? e.message : String(e))
    }
  }

  const fetchDocument: IvrFetcher['fetchDocument'] = async (urls, params, method = 'POST') => {
    const attempts: FetchError[] = []
    for (const requested of urls) {
      const r = await fetchOne(requested, params, method, 'application/xml, text/xml;q=0.9, */*;q=0.1')
      let failure: FetchError
      if (r.ok) {
        const text = decodeBody(r.value.bytes, r.value.contentType, true)
        const verdict = text.ok ? runAccept(text.value, r.value.contentType) : undefined
        if (text.ok && (verdict === undefined || verdict.ok)) {
          log.debug({ url: redactRaw(r.value.finalUrl), bytes: r.value.bytes.length }, 'ivr document fetched')
          return ok({ url: r.value.finalUrl, requestedUrl: requested, body: text.value, contentType: r.value.contentType })
        }
        const why = !text.ok ? text.error : verdict !== undefined && !verdict.ok ? verdict.error : 'rejected'
        failure = fail('invalid_body', redactRaw(r.value.finalUrl), `invalid document: ${why}`)
      } else {
        failure = r.error
      }
      logFailure(failure, 'document')
      attempts.push(failure)
    }
    const last = attempts[attempts.length - 1]
    if (last === undefined) return err(fail('bad_url', '', 'no URL to fetch'))
    if (attempts.length === 1) return err(last)
    return err({ ...last, message: attempts.map((a) => `${a.url}: ${a.message}`).join('; '), attempts })
  }

  const fetchJson: IvrFetcher['fetchJson'] = async (url, params, method = 'POST') => {
    const r = await fetchOne(url, params, method, 'application/json')
    let failure: FetchError
    if (r.ok) {
      const text = decodeBody(r.value.bytes, r.value.contentType, false)
      if (text.ok) {
        try {
          return ok(JSON.parse(text.value) as unknown)
        } catch (e) {
          failure = fail('invalid_body', redactRaw(r.value.finalUrl), `not JSON: ${e instanceof Error ? e.message : String(e)}`)
        }
      } else {
        failure = fail('invalid_body', redactRaw(r.value.finalUrl), text.error)
      }
    } else {
      failure = r.error
    }
    logFailure(failure, 'json')
    return err(failure)
  }

  const reportError: IvrFetcher['reportError'] = async (url, params, error) => {
    try {
      const form: Record<string, string> = { ...params, CallStatus: 'error' }
      if (error !== undefined) form.Error = error
      const r = await fetchOne(url, form, 'POST', '*/*')
      if (!r.ok) log.warn({ url: r.error.url, kind: r.error.kind, reason: r.error.message }, 'ivr error report not delivered')
    } catch (e) {
      // Best effort by contract: a report must never break the call's clean-up.
      log.warn({ url: redactRaw(url), err: e }, 'ivr error report failed')
    }
  }

  const checkTarget: IvrFetcher['checkTarget'] = async (raw) => {
    const url = parseHttpUrl(raw)
    if (!url.ok) return url
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    try {
      const addresses = await resolveChecked(url.value, controller.signal)
      return addresses.ok ? ok(undefined) : addresses
    } finally {
      clearTimeout(timer)
    }
  }

  return { fetchDocument, fetchJson, reportError, checkTarget }
}
