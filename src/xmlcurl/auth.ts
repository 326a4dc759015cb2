/**
 * HTTP Basic credentials of the xml_curl binding (`gateway-credentials` in
 * freeswitch/autoload_configs/xml_curl.conf.xml; libcurl sends them with every request).
 * Compared in constant time: both sides are hashed to 32 bytes first, so neither the length
 * nor the first differing byte shows in the timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()

/** The user and password of an `Authorization: Basic ...` header, or undefined. */
export function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  if (header === undefined) return undefined
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header)
  if (m === null || m[1] === undefined) return undefined
  const decoded = Buffer.from(m[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

export function credentialsMatch(header: string | undefined, user: string, password: string): boolean {
  const given = parseBasic(header)
  // Compare even when the header is missing, so a missing header takes as long as a wrong one.
  const userOk = timingSafeEqual(digest(given?.user ?? ''), digest(user))
  const passwordOk = timingSafeEqual(digest(given?.password ?? ''), digest(password))
  return given !== undefined && userOk && passwordOk
}
