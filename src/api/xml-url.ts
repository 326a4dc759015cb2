/**
 * The `xml_url:` destination forms (call_external only): a comma list of http/https URLs
 * (fallbacks, in order) or `inline_xml://<base64>`, an IVR document validated in full when the
 * request arrives (inline-ivr.ts) so a broken one is refused and nothing is originated. The
 * privilege check comes first, in destination.ts: a domain without it learns nothing more.
 */
import { decodeInlineXml } from '../ivr/document/index.js'
import type { IvrSource } from '../ivr/source.js'
import { apiError, type ApiError } from './errors.js'
import { checkInlineIvr } from './inline-ivr.js'
import { MAX_URL_LENGTH, checkHttpUrl } from './schema/url.js'
import { err, ok, type Result } from '../util/result.js'

export const XML_URL = 'xml_url:'
const INLINE = 'inline_xml://'
const MAX_FALLBACK_URLS = 8

/** `rest` is what follows `xml_url:`; `param` names the parameter in descriptions. */
export function parseXmlUrl(rest: string, param: string): Result<IvrSource, ApiError> {
  if (rest.startsWith(INLINE)) {
    const decoded = decodeInlineXml(rest.slice(INLINE.length))
    if (!decoded.ok) return err(apiError('invalid_xml', `${param}: ${decoded.error}`))
    const xml = decoded.value
    const checked = checkInlineIvr(xml)
    if (!checked.ok) return err(apiError('invalid_xml', `${param}: inline IVR document: ${checked.error}`))
    return ok({ kind: 'inline', xml })
  }
  const rule = `${param}: xml_url: takes http/https URLs (a comma list gives fallbacks, at most ${MAX_FALLBACK_URLS}, each at most ${MAX_URL_LENGTH} characters) or inline_xml://<base64>`
  const parts = rest.split(',')
  if (parts.length > MAX_FALLBACK_URLS) return err(apiError('invalid_parameter', rule))
  const urls: string[] = []
  for (const part of parts) {
    const url = checkHttpUrl(part)
    if (url === undefined) return err(apiError('invalid_parameter', rule))
    urls.push(url)
  }
  return ok({ kind: 'url', urls })
}
