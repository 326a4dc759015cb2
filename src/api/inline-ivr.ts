/**
 * The check an inline IVR document (`xml_url:inline_xml://<base64>`) passes before anything is
 * originated (docs/ivr.md "Inline documents": "validated when the API request arrives"):
 * the full validation of the IVR language (root, elements, attributes, nesting, ranges,
 * expressions; no DTD, so no entity expansion), so a broken document is refused with
 * invalid_xml and nothing is originated.
 */
import { parseIvrDocument } from '../ivr/document/index.js'
import { err, ok, type Result } from '../util/result.js'

export function checkInlineIvr(xml: string): Result<void, string> {
  const parsed = parseIvrDocument(xml)
  return parsed.ok ? ok(undefined) : err(parsed.error.reason)
}
