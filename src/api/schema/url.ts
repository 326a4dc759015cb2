/**
 * Client-given URLs (callback_url, the URLs of `xml_url:` destinations): absolute http/https,
 * printable ASCII without spaces, at most 2048 characters. The value kept is the URL as the
 * WHATWG parser serialises it, which is what every later request will use.
 *
 * (zod's own z.url() is not used: it trims the value before checking it, so a trailing line
 * break would pass.)
 */
import type { Cidr } from '../../net/address-guard.js'
import { literalVerdict } from '../../net/policy.js'
import { apiError, type ApiError } from '../errors.js'
import { HTTP_URL_PATTERN } from './forms.js'
import { strictString } from './text.js'

export const MAX_URL_LENGTH = 2048
const PRINTABLE_NO_SPACE_RE = /^[\x21-\x7e]+$/

/** The URL as the WHATWG parser serialises it, or undefined when it breaks the rules above. */
export function checkHttpUrl(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH || !PRINTABLE_NO_SPACE_RE.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined
  return url.href
}

const URL_RULE = `must be an absolute http or https URL of at most ${MAX_URL_LENGTH} characters`

export const callbackUrlSchema = strictString()
  .max(MAX_URL_LENGTH, URL_RULE)
  .regex(PRINTABLE_NO_SPACE_RE, URL_RULE)
  .refine((v) => checkHttpUrl(v) !== undefined, URL_RULE)
  .transform((v) => new URL(v).href)
  .meta({ format: 'uri', pattern: HTTP_URL_PATTERN })
  .describe(
    `Where the call's result is POSTed: an absolute http or https URL (RFC 3986) with a host, at most ${MAX_URL_LENGTH} characters. The daemon also takes what the WHATWG URL parser repairs (\`http:host\`, a backslash, characters RFC 3986 leaves out); a host that is an address outside \`callbacks.allow\` (private, loopback...) or a localhost name is refused (invalid_parameter).`,
  )

/**
 * issue 12 / README "Security": a callback_url whose host itself names an address the outbound
 * guard refuses (an IP literal in any form the URL parser understands, or a `localhost` name)
 * is refused at request time (so is a recording_callback_url, `param` naming it), before anything is originated, so the client hears about it at
 * once instead of through a dead letter. A host name is judged when the callback is delivered
 * (resolved once, every address checked: src/net/transport.ts). `allow` is `callbacks.allow`.
 */
export function callbackUrlRefusal(callbackUrl: string | undefined, allow: readonly Cidr[], param = 'callback_url'): ApiError | undefined {
  if (callbackUrl === undefined) return undefined
  let url: URL
  try {
    url = new URL(callbackUrl)
  } catch {
    // The schema already refused it; nothing to add here.
    return undefined
  }
  const v = literalVerdict(url, allow)
  if (v.kind !== 'refused') return undefined
  return apiError(
    'invalid_parameter',
    `${param}: must not name a ${v.reason.replace(/_/g, '-')} address (${v.detail}); callbacks go to public addresses only, unless the operator allows the range in callbacks.allow`,
  )
}
