/**
 * Rendering of the documents mod_xml_curl receives. One place decides how a value reaches
 * FreeSWITCH, so every document is escaped the same way:
 *
 * - `<`, `&`, `"` and `>` are escaped in attribute values; every value we send is an attribute
 *   value (no text nodes), so `]]>` or a stray `<` can never close or open markup. A character
 *   XML does not allow (a lone surrogate, U+FFFE, U+FFFF) is refused like a control character.
 *   Written with xmlbuilder2's callback builder (`createCB`: chunks out as the elements go in,
 *   no DOM), the project's XML library; its DOM builder cost 5-10 times the bare HTTP exchange
 *   per document (docs/bench.md). Every `&` is escaped before the builder sees the value: the
 *   builder leaves what already looks like an entity (`&amp;`, `&lt;`) as it is, and FreeSWITCH
 *   would then decode it, reading `&` where the value said `&amp;`
 *   (test/xmlcurl/document.test.ts). Per request nothing is rendered any more (issue 15): the
 *   directory documents are rendered once per configuration (document-cache.ts), and the dialplan
 *   document is cut once into fragments around escaped holes (dialplan-document.ts, attributeText).
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
import { createCB } from 'xmlbuilder2'

type XMLBuilderCB = ReturnType<typeof createCB>

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

/** Refuses what no attribute of ours may hold; `where` names the attribute for the log. */
function check(where: string, v: string): void {
  if (CONTROL_RE.test(v)) throw new UnsafeValueError(`${where} holds a control character`)
  if (NOT_XML_RE.test(v)) throw new UnsafeValueError(`${where} holds a character XML does not allow`)
}

/** The value checked, with every `&` escaped (the builder escapes `<`, `>` and `"` itself, and leaves `&amp;` alone). */
function attrValue(node: XmlNode, name: string, v: string): string {
  check(`attribute ${name} of <${node.name}>`, v)
  return v.includes('&') ? v.replace(/&/g, '&amp;') : v
}

const ESCAPED: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', $: '&#36;' }
/** What renderDocument changes in a value: the builder's four escapes (after our `&`), and a `$` before a `$`. */
const TO_ESCAPE_RE = /[&<>"]|\$(?=\$)/g
const NEEDS_ESCAPE_RE = /[&<>"$]/

/**
 * A value as renderDocument writes it between an attribute's quotes: the same checks, the same
 * bytes (`&` `<` `>` `"` as xmlbuilder2 escapes them once every `&` is escaped, `$` before `$` as
 * `&#36;`). For documents cut from an xmlbuilder2 rendering with holes (dialplan-document.ts):
 * the text around a hole never holds a `$`, so the `$$` rule applies within the value alone.
 * test/xmlcurl/document.test.ts holds both paths to the same bytes.
 */
export function attributeText(where: string, v: string): string {
  check(where, v)
  return NEEDS_ESCAPE_RE.test(v) ? v.replace(TO_ESCAPE_RE, (c) => ESCAPED[c] as string) : v
}

function write(b: XMLBuilderCB, node: XmlNode): void {
  b.ele(node.name)
  const attrs = node.attrs
  if (attrs !== undefined) for (const k in attrs) b.att(k, attrValue(node, k, attrs[k] as string))
  for (const c of node.children ?? []) write(b, c)
  b.up()
}

/** Serialises a `<document type="freeswitch/xml">` with the children given (2-space indentation, no declaration). */
export function renderDocument(children: readonly XmlNode[]): string {
  let text = ''
  let failure: Error | undefined
  const b = createCB({
    data: (chunk: string) => {
      text += chunk
    },
    error: (e: Error) => {
      failure ??= e
    },
    prettyPrint: true,
    indent: '  ',
    newline: '\n',
    wellFormed: true,
  })
  write(b, el('document', { type: 'freeswitch/xml' }, children))
  b.end()
  // Checked above already; should the builder still refuse a character, nothing half-written is sent.
  if (failure !== undefined) throw new UnsafeValueError(failure.message)
  return `${text.replace(/\$(?=\$)/g, '&#36;')}\n`
}
