/**
 * HTTP Basic authentication of API requests (docs/interface.md "Authentication"): the username is
 * the domain name, the password one of the domain's API tokens. The CTI module uses the same
 * function, so both doors answer alike.
 *
 * Nothing about a failure leaks: an unknown domain, a wrong token and a malformed header give
 * the same error, and token comparison takes the same time whatever the token, its length or
 * how many characters match (sha256 digests compared with timingSafeEqual, every token checked).
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

export function authenticate(authorization: string | undefined, directory: Directory): Result<DomainDirectory, ApiError> {
  const credentials = parseBasic(authorization)
  if (credentials === undefined) return err(UNAUTHORIZED)
  const presented = sha256(credentials.password)
  const domain = directory.domain(credentials.user)
  const digests = domain === undefined ? [DUMMY_DIGEST] : domain.config.api_tokens.map(digestOf)
  let match = false
  for (const digest of digests) {
    // Every token is compared (no early exit); a malformed stored digest never matches.
    const same = sameDigest(digest, presented)
    match = same || match
  }
  if (domain === undefined || !match || credentials.password.length === 0) return err(UNAUTHORIZED)
  return ok(domain)
}
