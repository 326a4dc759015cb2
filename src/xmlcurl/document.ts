/**
 * Rendering of the documents mod_xml_curl receives. One place decides how a value reaches
 * FreeSWITCH, so every document is escaped the same way:
 *
 * - xmlbuilder2 escapes `<`, `&`, `"` (and `>`) in attribute values; every value we send is an
 *   attribute value (no text nodes), so `]]>` or a stray `<` can never close or open markup.
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
import { create } from 'xmlbuilder2'

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

type Builder = ReturnType<typeof create>

function append(parent: Builder, node: XmlNode): void {
  const attrs = node.attrs ?? {}
  for (const [k, v] of Object.entries(attrs)) {
    if (CONTROL_RE.test(v)) throw new UnsafeValueError(`attribute ${k} of <${node.name}> holds a control character`)
  }
  const child = parent.ele(node.name, attrs)
  for (const c of node.children ?? []) append(child, c)
}

/** Serialises a `<document type="freeswitch/xml">` with the children given. */
export function renderDocument(children: readonly XmlNode[]): string {
  const root = create()
  append(root, el('document', { type: 'freeswitch/xml' }, children))
  const xml = root.end({ headless: true, prettyPrint: true, wellFormed: true })
  return `${xml.replace(/\$(?=\$)/g, '&#36;')}\n`
}
