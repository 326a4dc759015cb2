/**
 * What the fetcher offers the IVR runner (IvrFetcher) and what its steps share: the settings
 * of one HTTP exchange, resolved once from FetcherOptions.
 */
import type { OutboundTransport } from '../../net/transport.js'
import type { Result } from '../../util/result.js'
import type { FetchError } from './errors.js'

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
  /**
   * Tell a document's URL how its call went: POST the params as they are (the end of a call:
   * `CallStatus=completed`, its duration, a fax's results). Best effort like reportError.
   */
  notify(url: string, params: Readonly<Record<string, string>>): Promise<void>
}

/** FetcherOptions with their defaults applied: what every step of a fetch reads. */
export interface HttpSettings {
  /** The one outbound transport (src/net/transport.ts), with the IVR's allow-list. */
  readonly transport: OutboundTransport
  /** Per URL, covering DNS, connect, redirects and the body. */
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxRedirects: number
  readonly userAgent: string
}
