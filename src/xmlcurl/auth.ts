/**
 * HTTP Basic credentials of the xml_curl binding (`gateway-credentials` in
 * freeswitch/autoload_configs/xml_curl.conf.xml; libcurl sends them with every request),
 * compared in constant time (util/basic-auth.ts).
 */
import { parseBasic, sameSecret } from '../util/basic-auth.js'

export { parseBasic }

export function credentialsMatch(header: string | undefined, user: string, password: string): boolean {
  const given = parseBasic(header)
  // Compare even when the header is missing, so a missing header takes as long as a wrong one.
  const userOk = sameSecret(given?.user ?? '', user)
  const passwordOk = sameSecret(given?.password ?? '', password)
  return given !== undefined && userOk && passwordOk
}
