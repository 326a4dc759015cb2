/**
 * Client-given URLs (callback_url, the URLs of `xml_url:` destinations): absolute http/https,
 * printable ASCII without spaces, at most 2048 characters. The value kept is the URL as the
 * WHATWG parser serialises it, which is what every later request will use.
 *
 * (zod's own z.url() is not used: it trims the value before checking it, so a trailing line
 * break would pass.)
 */
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
  .describe(`Where the call's result is POSTed: an absolute http or https URL of at most ${MAX_URL_LENGTH} printable ASCII characters without spaces.`)
