/**
 * How an outbound request fails, as a value: one kind per thing a caller decides on (a refused
 * address is final, a network error may be retried, a timeout names where it waited) and one
 * log-safe line. Every part that makes requests (result callbacks, IVR fetches) maps these to
 * its own vocabulary; none of them sees undici's or node's exceptions.
 */
import type { RefusalReason } from './address-guard.js'

export type OutboundError =
  /** The URL's host is, or resolves to, an address the policy refuses: nothing was connected. */
  | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly message: string }
  /** Not an absolute http(s) URL with a host. */
  | { readonly kind: 'bad_url'; readonly message: string }
  /** The host name did not resolve (or resolved to nothing). */
  | { readonly kind: 'dns'; readonly message: string }
  /** The request's own time budget ran out; `resolving`: while its host was being resolved. */
  | { readonly kind: 'timeout'; readonly phase: 'resolving' | 'answer'; readonly message: string }
  /** The caller's signal fired (shutdown). */
  | { readonly kind: 'aborted'; readonly message: string }
  /** The body passed the cap (only when the request asked for `overflow: 'fail'`). */
  | { readonly kind: 'too_large'; readonly message: string }
  /** Connection refused or reset, TLS failure, malformed answer... */
  | { readonly kind: 'network'; readonly message: string }

/**
 * The exception a guarded lookup or connect hands to undici, which passes it through to the
 * request unchanged: the transport unwraps the OutboundError it carries.
 */
export class OutboundFailure extends Error {
  readonly code = 'E_OUTBOUND_REFUSED'
  constructor(readonly failure: OutboundError) {
    super(failure.message)
    this.name = 'OutboundFailure'
  }
}
