/**
 * HTTP Basic authentication of API requests (docs/interface.md "Authentication"): the username is
 * the domain name, the password one of the domain's API tokens. The CTI module uses the same
 * function, so both doors answer alike.
 *
 * Nothing about a failure leaks: an unknown domain, a wrong token and a malformed header give
 * the same error, and token comparison takes the same time whatever the token, its length or
 * how many characters match (sha256 digests compared with timingSafeEqual, every token checked).
 * The digests of the configured tokens are computed once per configuration, and a header already
 * accepted is not checked again until the next reload (issue 15: hashes once per token).
 */
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { apiError, type ApiError } from './errors.js'
import { err, ok, type Result } from '../util/result.js'
import { parseBasic, sameDigest, sha256 } from '../util/basic-auth.js'

/** The challenge sent with every 401 (RFC 7617). */
export const WWW_AUTHENTICATE = 'Basic realm="call-origination"'

const UNAUTHORIZED: ApiError = apiError(
  'unauthorized',
  'HTTP Basic credentials are missing or wrong: the username is the domain name, the password an API token of that domain',
)

const HASHED_PREFIX = 'sha256:'

/**
 * Compared against when the domain is unknown, so that an unknown domain costs the same work
 * as a known one with a wrong token (no timing oracle for domain names).
 */
const DUMMY_DIGEST = sha256('no domain has this token: it only keeps the timing even')

/** The digest a configured token stands for: `sha256:<hex>` as given, a plain token hashed. */
function digestOf(configured: string): Buffer {
  return configured.startsWith(HASHED_PREFIX) ? Buffer.from(configured.slice(HASHED_PREFIX.length), 'hex') : sha256(configured)
}

/** Each domain's token digests, computed once per configuration (a reload builds new domains). */
const digestsOf = new WeakMap<DomainDirectory, readonly Buffer[]>()

function tokenDigests(domain: DomainDirectory): readonly Buffer[] {
  let digests = digestsOf.get(domain)
  if (digests === undefined) digestsOf.set(domain, (digests = domain.config.api_tokens.map(digestOf)))
  return digests
}

/**
 * Authorization headers already accepted, per configuration generation (the Directory object,
 * replaced on every reload, so a token removed by a reload is never accepted from here): a client
 * sending the same credentials on every request costs the digests once, not once per request.
 * Only accepted headers are kept (a refusal is never cached, so garbage cannot fill it); bounded.
 * A hit answers faster than a miss, but only for the exact header of a valid token: that tells
 * nothing about any other token.
 */
const acceptedHeaders = new WeakMap<Directory, Map<string, DomainDirectory>>()
const MAX_ACCEPTED = 1024

export function authenticate(authorization: string | undefined, directory: Directory): Result<DomainDirectory, ApiError> {
  if (authorization === undefined) return err(UNAUTHORIZED)
  let accepted = acceptedHeaders.get(directory)
  const known = accepted?.get(authorization)
  if (known !== undefined) return ok(known)
  const checked = check(authorization, directory)
  if (checked.ok) {
    if (accepted === undefined) acceptedHeaders.set(directory, (accepted = new Map()))
    if (accepted.size >= MAX_ACCEPTED) accepted.clear()
    accepted.set(authorization, checked.value)
  }
  return checked
}

function check(authorization: string, directory: Directory): Result<DomainDirectory, ApiError> {
  const credentials = parseBasic(authorization)
  if (credentials === undefined) return err(UNAUTHORIZED)
  const presented = sha256(credentials.password)
  const domain = directory.domain(credentials.user)
  const digests = domain === undefined ? [DUMMY_DIGEST] : tokenDigests(domain)
  let match = false
  for (const digest of digests) {
    // Every token is compared (no early exit); a malformed stored digest never matches.
    const same = sameDigest(digest, presented)
    match = same || match
  }
  if (domain === undefined || !match || credentials.password.length === 0) return err(UNAUTHORIZED)
  return ok(domain)
}
