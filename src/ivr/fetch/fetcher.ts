/**
 * Fetches IVR documents and GetJSON data from application servers, under the fetch rules of
 * docs/ivr.md ("Fetching") and docs/design.md "Security rules":
 *
 * - http/https only; every redirect hop is checked again (fetch-url.ts);
 * - every request goes through the daemon's one outbound transport (src/net/transport.ts): the
 *   host is resolved once (all addresses), EVERY address must pass the address guard and the
 *   operator's `ivr.fetch_allow`, and the connection is pinned to the checked addresses, so a
 *   DNS answer that changes between check and connect (DNS rebinding) cannot redirect it;
 * - one overall timeout per URL (DNS, connect, redirects and body), a body size cap (aborted as
 *   soon as it is passed), non-2xx is a failure;
 * - parameters are sent form-encoded: POST body `application/x-www-form-urlencoded`, or the
 *   query string for GET.
 *
 * This file is what the runner uses: a document from a list of fallback URLs (validated by
 * `accept`), JSON, error reports to a document's URL, and the check of prompt URLs.
 * Failures are values (FetchError, errors.ts).
 */
import type { Cidr } from '../../net/address-guard.js'
import type { Resolver } from '../../net/policy.js'
import { createTransport, type OutboundTransport } from '../../net/transport.js'
import type { Logger } from '../../util/logger.js'
import { err, ok, type Result } from '../../util/result.js'
import { decodeBody } from './decode.js'
import { fetchError, type FetchError } from './errors.js'
import { checkUrlTarget, fetchUrl } from './fetch-url.js'
import type { HttpSettings, IvrFetcher } from './types.js'
import { redactRaw } from './urls.js'

export type { FetchError, FetchErrorKind } from './errors.js'
export type { FetchedDocument, HttpMethod, IvrFetcher } from './types.js'

/** Where requests go: the daemon's IVR transport, or one built here from an allow-list. */
export type FetcherTransport =
  | { readonly transport: OutboundTransport }
  | {
      /** Operator allow-list (`ivr.fetch_allow`, parsed with parseCidrList). */
      readonly allow: readonly Cidr[]
      /** Host name to addresses; default the system resolver. Tests inject one. */
      readonly lookup?: Resolver
      /** Trusted CA certificates for https; replaces the default roots (private IVR servers, tests). */
      readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
    }

export type FetcherOptions = FetcherTransport & {
  /** Per URL, covering DNS, connect, redirects and the body. Default 5000. */
  readonly timeoutMs?: number
  /** Largest body accepted. Default 256 KiB. */
  readonly maxBytes?: number
  /** Redirects followed per URL. Default 3. */
  readonly maxRedirects?: number
  /**
   * fetchDocument only: validates a 2xx body (e.g. parse it as an IVR document). An error
   * makes the URL fail with `invalid_body` and the next URL of the list is tried.
   */
  readonly accept?: (body: string, contentType: string) => Result<unknown, string>
  readonly userAgent?: string
  readonly logger: Logger
}

/** The IVR's transport: its allow-list is `ivr.fetch_allow`. */
export const createIvrTransport = (o: {
  readonly allow: () => readonly Cidr[]
  readonly lookup?: Resolver
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
}): OutboundTransport =>
  createTransport({
    allow: o.allow,
    setting: 'ivr.fetch_allow',
    ...(o.lookup !== undefined ? { resolver: o.lookup } : {}),
    ...(o.ca !== undefined ? { ca: o.ca } : {}),
  })

export const createFetcher = (opts: FetcherOptions): IvrFetcher => {
  const transport =
    'transport' in opts
      ? opts.transport
      : createIvrTransport({ allow: () => opts.allow, ...(opts.lookup !== undefined ? { lookup: opts.lookup } : {}), ...(opts.ca !== undefined ? { ca: opts.ca } : {}) })
  const s: HttpSettings = {
    transport,
    timeoutMs: opts.timeoutMs ?? 5000,
    maxBytes: opts.maxBytes ?? 256 * 1024,
    maxRedirects: opts.maxRedirects ?? 3,
    userAgent: opts.userAgent ?? 'fs-call-originator-ivr',
  }
  const log = opts.logger

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
      const r = await fetchUrl(requested, params, method, 'application/xml, text/xml;q=0.9, */*;q=0.1', s)
      let failure: FetchError
      if (r.ok) {
        const text = decodeBody(r.value.bytes, r.value.contentType, true)
        const verdict = text.ok ? runAccept(text.value, r.value.contentType) : undefined
        if (text.ok && (verdict === undefined || verdict.ok)) {
          log.debug({ url: redactRaw(r.value.finalUrl), bytes: r.value.bytes.length }, 'ivr document fetched')
          return ok({ url: r.value.finalUrl, requestedUrl: requested, body: text.value, contentType: r.value.contentType })
        }
        const why = !text.ok ? text.error : verdict !== undefined && !verdict.ok ? verdict.error : 'rejected'
        failure = fetchError('invalid_body', redactRaw(r.value.finalUrl), `invalid document: ${why}`)
      } else {
        failure = r.error
      }
      logFailure(failure, 'document')
      attempts.push(failure)
    }
    const last = attempts[attempts.length - 1]
    if (last === undefined) return err(fetchError('bad_url', '', 'no URL to fetch'))
    if (attempts.length === 1) return err(last)
    return err({ ...last, message: attempts.map((a) => `${a.url}: ${a.message}`).join('; '), attempts })
  }

  const fetchJson: IvrFetcher['fetchJson'] = async (url, params, method = 'POST') => {
    const r = await fetchUrl(url, params, method, 'application/json', s)
    let failure: FetchError
    if (r.ok) {
      const text = decodeBody(r.value.bytes, r.value.contentType, false)
      if (text.ok) {
        try {
          return ok(JSON.parse(text.value) as unknown)
        } catch (e) {
          failure = fetchError('invalid_body', redactRaw(r.value.finalUrl), `not JSON: ${e instanceof Error ? e.message : String(e)}`)
        }
      } else {
        failure = fetchError('invalid_body', redactRaw(r.value.finalUrl), text.error)
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
      const r = await fetchUrl(url, form, 'POST', '*/*', s)
      if (!r.ok) log.warn({ url: r.error.url, kind: r.error.kind, reason: r.error.message }, 'ivr error report not delivered')
    } catch (e) {
      // Best effort by contract: a report must never break the call's clean-up.
      log.warn({ url: redactRaw(url), err: e }, 'ivr error report failed')
    }
  }

  const notify: IvrFetcher['notify'] = async (url, params) => {
    try {
      const r = await fetchUrl(url, params, 'POST', '*/*', s)
      if (!r.ok) log.warn({ url: r.error.url, kind: r.error.kind, reason: r.error.message }, 'ivr call status not delivered')
    } catch (e) {
      // Best effort by contract, as reportError.
      log.warn({ url: redactRaw(url), err: e }, 'ivr call status failed')
    }
  }

  const checkTarget: IvrFetcher['checkTarget'] = (raw) => checkUrlTarget(raw, s)

  return { fetchDocument, fetchJson, reportError, notify, checkTarget }
}
