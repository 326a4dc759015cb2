/**
 * The check an inline IVR document (`xml_url:inline_xml://<base64>`) passes before anything is
 * originated (ivr-xml.md "Document rules"): well-formed XML, no DTD (so no entity expansion),
 * exactly one root element, named `IVR` or `Response`.
 *
 * This is the minimal check; the IVR module replaces the body with its full validation
 * (elements, attributes, nesting) and keeps the signature.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { err, ok, type Result } from '../util/result.js'

const ROOTS = ['IVR', 'Response']
const WRAPPER = 'inline-ivr-wrapper'

// Entities are never processed: a DTD could declare expanding ones ("billion laughs").
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
})

export function checkInlineIvr(xml: string): Result<void, string> {
  // Refused anywhere, not only in the prolog: a document never needs one, and refusing
  // by text means no parser option can let a DTD through.
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) return err('a DOCTYPE or ENTITY declaration is not allowed')
  const valid = XMLValidator.validate(xml)
  if (valid !== true) return err(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`)
  // The parser drops text outside the root element, so the document (less its XML
  // declaration) is parsed inside a wrapper: what was top level becomes the wrapper's children.
  const body = xml.replace(/^\s*<\?xml[\s\S]*?\?>/, '')
  let top: unknown
  try {
    const parsed: unknown = parser.parse(`<${WRAPPER}>${body}</${WRAPPER}>`)
    top = Array.isArray(parsed) ? (parsed[0] as Record<string, unknown> | undefined)?.[WRAPPER] : undefined
  } catch (e) {
    return err(`not well-formed XML: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (!Array.isArray(top)) return err('not well-formed XML')
  const nodes = top.filter((n): n is Record<string, unknown> => typeof n === 'object' && n !== null)
  if (nodes.some((n) => typeof n['#text'] === 'string' && n['#text'].trim() !== '')) return err('text outside the root element')
  const elements = nodes.flatMap((n) => Object.keys(n).filter((k) => k !== '#text' && k !== ':@'))
  if (elements.length !== 1) return err(`a document has exactly one root element; found ${elements.length}`)
  const root = elements[0] ?? ''
  if (!ROOTS.includes(root)) return err(`the root element must be <IVR> or <Response>`)
  return ok(undefined)
}
