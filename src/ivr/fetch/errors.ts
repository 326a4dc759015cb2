/**
 * How a fetch fails: a kind and one line fit for logs and for the `Error=` parameter reported
 * back to a document's URL. Failures are values, never exceptions.
 */

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

export const fetchError = (kind: FetchErrorKind, url: string, message: string, status?: number): FetchError =>
  status === undefined ? { kind, url, message } : { kind, url, message, status }
