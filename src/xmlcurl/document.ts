/**
 * Rendering of the documents mod_xml_curl receives. One place decides how a value reaches
 * FreeSWITCH, so every document is escaped the same way:
 *
 * - `<`, `&`, `"` and `>` are escaped in attribute values; every value we send is an attribute
 *   value (no text nodes), so `]]>` or a stray `<` can never close or open markup. A character
 *   XML does not allow (a lone surrogate, U+FFFE, U+FFFF) is refused like a control character.
 *   The documents were written with xmlbuilder2 until issue 15; its DOM cost 5-10 times the
 *   bare HTTP exchange per document (docs/bench.md), so they are now written as strings here,
 *   byte for byte as xmlbuilder2 wrote them (test/xmlcurl/document.test.ts compares the two).
 * - Control characters are refused (UnsafeValueError): XML would turn a newline in an attribute
 *   into a space, so a value that needs one is not a value we should send.
 * - FreeSWITCH runs every fetched document through its config preprocessor before parsing it
 *   (switch_xml.c, switch_xml_parse_file → preprocess → expand_vars, v1.10.12), which replaces
 *   `$${name}` with global variables in the raw text. A `$` that is followed by another `$` is
 *   therefore written as the character reference `&#36;`: the parser decodes it back
 *   (switch_xml_decode handles `&#NN;`), so the value FreeSWITCH uses is unchanged, but the raw
 *   text never holds `$${`. The other preprocessor triggers (`<X-PRE-PROCESS`, `<!--#`, lines
 *   holding `<?` or `<include>`) all need a raw `<`, which escaping already removes; the XML
 *   declaration is left out for the same reason (a line holding `<?` is dropped).
 */
/** The reply that makes FreeSWITCH use its static XML (test/fixtures/freeswitch/README.md, verbatim). */
export const NOT_FOUND =
  '<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>'

/** A value that cannot be written into a document; the router answers "not found". */
export class UnsafeValueError extends Error {
  override readonly name = 'UnsafeValueError'
}

export interface XmlNode {
  readonly name: string
  readonly attrs?: Readonly<Record<string, string>>
  readonly children?: readonly XmlNode[]
}

export const el = (name: string, attrs?: Readonly<Record<string, string>>, children?: readonly XmlNode[]): XmlNode => ({
  name,
  ...(attrs === undefined ? {} : { attrs }),
  ...(children === undefined ? {} : { children }),
})

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_RE = /[\x00-\x1f\x7f]/
/** Characters XML 1.0 does not allow beyond the control characters: lone surrogates, U+FFFE, U+FFFF. */
const NOT_XML_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFE\uFFFF]/
const ESCAPED_RE = /[&<>"]/g
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }

function attrValue(node: XmlNode, name: string, v: string): string {
  if (CONTROL_RE.test(v)) throw new UnsafeValueError(`attribute ${name} of <${node.name}> holds a control character`)
  if (NOT_XML_RE.test(v)) throw new UnsafeValueError(`attribute ${name} of <${node.name}> holds a character XML does not allow`)
  return v.replace(ESCAPED_RE, (c) => ENTITY[c] as string)
}

function write(node: XmlNode, indent: string, out: string[]): void {
  let open = `${indent}<${node.name}`
  const attrs = node.attrs
  if (attrs !== undefined) for (const k in attrs) open += ` ${k}="${attrValue(node, k, attrs[k] as string)}"`
  const children = node.children
  if (children === undefined || children.length === 0) {
    out.push(`${open}/>`)
    return
  }
  out.push(`${open}>`)
  const inner = `${indent}  `
  for (const c of children) write(c, inner, out)
  out.push(`${indent}</${node.name}>`)
}

/** Serialises a `<document type="freeswitch/xml">` with the children given (2-space indentation, no declaration). */
export function renderDocument(children: readonly XmlNode[]): string {
  const out: string[] = []
  write(el('document', { type: 'freeswitch/xml' }, children), '', out)
  return `${out.join('\n').replace(/\$(?=\$)/g, '&#36;')}\n`
}
