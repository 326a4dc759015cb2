/**
 * HTTP Basic credentials of the xml_curl binding (`gateway-credentials` in
 * freeswitch/autoload_configs/xml_curl.conf.xml; libcurl sends them with every request),
 * compared in constant time (util/basic-auth.ts).
 *
 * libcurl sends the same header with every fetch, and checking it costs four sha256 digests and
 * a base64/UTF-8 decode: an accepted header is remembered for the credentials object it was
 * checked against (the configuration's `xml_curl` section, a new object on every reload, so a
 * rotated password is never accepted from here), as the API does with its tokens
 * (src/api/auth.ts). Only accepted headers are kept, a few at most; a refusal is never cached.
 */
import { parseBasic, sameSecret } from '../util/basic-auth.js'

export { parseBasic }

export interface XmlCurlCredentials {
  readonly username: string
  readonly password: string
}

const MAX_ACCEPTED = 8
const accepted = new WeakMap<XmlCurlCredentials, Set<string>>()

function checkHeader(header: string | undefined, user: string, password: string): boolean {
  const given = parseBasic(header)
  // Compare even when the header is missing, so a missing header takes as long as a wrong one.
  const userOk = sameSecret(given?.user ?? '', user)
  const passwordOk = sameSecret(given?.password ?? '', password)
  return given !== undefined && userOk && passwordOk
}

export function credentialsMatch(header: string | undefined, credentials: XmlCurlCredentials): boolean {
  if (header === undefined) return checkHeader(header, credentials.username, credentials.password)
  let known = accepted.get(credentials)
  if (known?.has(header) === true) return true
  if (!checkHeader(header, credentials.username, credentials.password)) return false
  if (known === undefined) accepted.set(credentials, (known = new Set()))
  if (known.size >= MAX_ACCEPTED) known.clear()
  known.add(header)
  return true
}
