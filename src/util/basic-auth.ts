/**
 * HTTP Basic credentials (RFC 7617), shared by the API, CTI and the xml_curl endpoint, and the
 * constant-time comparison they all use: secrets are compared as sha256 digests, so neither
 * the length nor the first differing byte shows in the timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

export const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest()

/** `Basic <base64(user:password)>`; undefined when the header is not exactly that (or too long). */
export function parseBasic(authorization: string | undefined): { user: string; password: string } | undefined {
  if (authorization === undefined || authorization.length > 4096) return undefined
  const m = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(authorization)
  if (m === null || m[1] === undefined || m[1].length % 4 !== 0) return undefined
  let decoded: string
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(m[1], 'base64'))
  } catch {
    return undefined
  }
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/** Constant-time equality of two secrets (digests of equal length, whatever the inputs). */
export const sameSecret = (given: string, expected: string): boolean => timingSafeEqual(sha256(given), sha256(expected))

/** Constant-time equality of a digest with a presented secret's digest; a malformed digest never matches. */
export const sameDigest = (digest: Buffer, presented: Buffer): boolean =>
  digest.length === presented.length && timingSafeEqual(digest, presented)
