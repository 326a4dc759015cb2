/**
 * Reads XML text into a small tree with positions, refusing everything the IVR language has no
 * use for and that has been used to attack XML readers: DTDs and entity declarations (billion
 * laughs, external entities), unknown entities, processing instructions, control characters.
 * fast-xml-parser does the tokenizing with entity processing off; the five predefined entities
 * and character references are decoded here, in one pass, so nothing can expand.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { err, ok, type Result } from '../../util/result.js'

export interface XmlElement {
  readonly kind: 'element'
  readonly name: string
  /** In document order, values decoded. */
  readonly attrs: readonly (readonly [string, string])[]
  readonly children: readonly XmlNode[]
  readonly line: number
  readonly column: number
}

export type XmlNode =
  | XmlElement
  /** Character data with references decoded. */
  | { readonly kind: 'text'; readonly text: string }
  /** A CDATA section: taken as written. */
  | { readonly kind: 'cdata'; readonly text: string }
  | { readonly kind: 'pi'; readonly name: string; readonly line: number; readonly column: number }

export interface XmlError {
  readonly reason: string
  readonly line?: number
  readonly column?: number
}

const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }
const REFERENCE = /&(#x[0-9A-Fa-f]{1,8}|#[0-9]{1,10}|[A-Za-z_:][A-Za-z0-9_:.-]{0,63});/y

// eslint-disable-next-line no-control-regex -- XML 1.0 forbids these characters (section 2.2)
const FORBIDDEN_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/

const isXmlChar = (cp: number): boolean =>
  cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff)

/** Decodes `&amp; &lt; &gt; &quot; &apos;` and `&#...;`; any other `&` is an error. */
function decodeReferences(raw: string): Result<string, string> {
  if (!raw.includes('&')) return ok(raw)
  let out = ''
  let i = 0
  for (;;) {
    const amp = raw.indexOf('&', i)
    if (amp < 0) return ok(out + raw.slice(i))
    out += raw.slice(i, amp)
    REFERENCE.lastIndex = amp
    const m = REFERENCE.exec(raw)
    if (m === null) return err('a bare & must be written &amp;')
    const ref = m[1] as string
    if (ref.startsWith('#')) {
      const cp = ref.startsWith('#x') ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
      if (!isXmlChar(cp)) return err(`&${ref}; is not an allowed character`)
      out += String.fromCodePoint(cp)
    } else {
      if (!Object.hasOwn(PREDEFINED, ref)) {
        return err(`unknown entity &${ref}; (only &amp; &lt; &gt; &quot; &apos; and &#...; character references: there is no DTD)`)
      }
      out += PREDEFINED[ref]
    }
    i = amp + m[0].length
  }
}

/** XML attribute-value normalization: literal tab and newline become spaces; references are kept. */
function decodeAttribute(raw: string): Result<string, string> {
  if (raw.includes('<')) return err('a < in an attribute value must be written &lt;')
  return decodeReferences(raw.replace(/[\t\n]/g, ' '))
}

class Positions {
  private readonly starts: number[] = [0]
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1)
  }
  at(offset: number): { line: number; column: number } {
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if ((this.starts[mid] as number) <= offset) lo = mid
      else hi = mid - 1
    }
    return { line: lo + 1, column: offset - (this.starts[lo] as number) + 1 }
  }
}

// The typings declare the wrapper type Symbol; the value is a primitive symbol.
const META = XMLParser.getMetaDataSymbol() as unknown as symbol

function metaIndex(node: object, key: 'startIndex' | 'endIndex'): number | undefined {
  const meta: unknown = (node as Record<symbol, unknown>)[META]
  if (typeof meta === 'object' && meta !== null && key in meta) {
    const v: unknown = (meta as Record<string, unknown>)[key]
    if (typeof v === 'number') return v
  }
  return undefined
}

/**
 * fast-xml-parser's validator and parser both let text after a self-closed root through
 * (`<IVR/>junk`) and drop it silently; XML forbids it, and so do we.
 */
function trailingText(xml: string, raw: unknown): { text: string; at: number } | undefined {
  if (!Array.isArray(raw)) return undefined
  let end = 0
  for (const node of raw as unknown[]) {
    if (typeof node === 'object' && node !== null) end = Math.max(end, metaIndex(node, 'endIndex') ?? 0)
  }
  const tail = xml.slice(end).replace(/<!--[\s\S]*?-->/g, '').replace(/<\?[\s\S]*?\?>/g, '')
  return tail.trim() === '' ? undefined : { text: tail.trim(), at: end }
}

/**
 * fast-xml-parser renames names that shadow Object.prototype members (`toString` becomes
 * `__toString`) as its own defence; give messages the name the author wrote.
 */
function writtenName(name: string): string {
  const bare = name.slice(2)
  return name.startsWith('__') && bare !== '' && bare in Object.prototype ? bare : name
}

class Converter {
  constructor(private readonly positions: Positions) {}

  nodes(raw: unknown): Result<XmlNode[], XmlError> {
    if (!Array.isArray(raw)) return ok([])
    const out: XmlNode[] = []
    for (const item of raw as unknown[]) {
      const n = this.node(item)
      if (!n.ok) return n
      if (n.value !== undefined) out.push(n.value)
    }
    return ok(out)
  }

  private node(item: unknown): Result<XmlNode | undefined, XmlError> {
    if (typeof item !== 'object' || item === null) return ok(undefined)
    const rec = item as Record<string, unknown>
    if (Object.hasOwn(rec, '#text')) {
      const t = decodeReferences(String(rec['#text']))
      return t.ok ? ok({ kind: 'text', text: t.value }) : err({ reason: t.error })
    }
    if (Object.hasOwn(rec, '#cdata')) {
      const parts = Array.isArray(rec['#cdata']) ? (rec['#cdata'] as unknown[]) : []
      const text = parts
        .map((p) => (typeof p === 'object' && p !== null && '#text' in p ? String(p['#text']) : ''))
        .join('')
      return ok({ kind: 'cdata', text })
    }
    const name = Object.keys(rec).find((k) => k !== ':@')
    if (name === undefined) return ok(undefined)
    const { line, column } = this.positions.at(metaIndex(rec, 'startIndex') ?? 0)
    if (name.startsWith('?')) return ok({ kind: 'pi', name: name.slice(1), line, column })
    const attrs: (readonly [string, string])[] = []
    const rawAttrs = rec[':@']
    if (typeof rawAttrs === 'object' && rawAttrs !== null) {
      for (const [k, v] of Object.entries(rawAttrs)) {
        const d = decodeAttribute(String(v))
        if (!d.ok) return err({ reason: `attribute ${writtenName(k)} of <${writtenName(name)}>: ${d.error}`, line, column })
        attrs.push([writtenName(k), d.value])
      }
    }
    const children = this.nodes(rec[name])
    if (!children.ok) {
      // A reference error in text has no position of its own: use the enclosing element's.
      const e = children.error
      return err(e.line === undefined ? { reason: `in <${name}>: ${e.reason}`, line, column } : e)
    }
    return ok({ kind: 'element', name: writtenName(name), attrs, children: children.value, line, column })
  }
}

/**
 * Well-formedness, refusals and the raw tree. `maxDepth` (the root counting as 1) bounds
 * nesting while parsing, so a deeply nested document is refused before any tree walk could
 * exhaust the stack. fast-xml-parser's maxNestedTags lets one level more through than its
 * value; that level reaches the IVR validator, which reports it with its path.
 */
export function readXml(input: string, maxDepth: number): Result<XmlNode[], XmlError> {
  // A byte order mark is harmless; XML 1.0 line-end handling (section 2.11) makes every line end \n.
  const xml = input.replace(/^\ufeff/, '').replace(/\r\n?/g, '\n')
  const positions = new Positions(xml)
  const dtd = /<!(DOCTYPE|ENTITY)/i.exec(xml)
  if (dtd) {
    return err({ reason: `<!${dtd[1]}> is not allowed (no DTD, no entity declarations)`, ...positions.at(dtd.index) })
  }
  const bad = FORBIDDEN_CHARS.exec(xml)
  if (bad) {
    const code = (bad[0].codePointAt(0) ?? 0).toString(16).padStart(4, '0')
    return err({ reason: `control character U+${code} is not allowed in XML`, ...positions.at(bad.index) })
  }
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false })
  if (valid !== true) {
    return err({ reason: `not well-formed XML: ${valid.err.msg}`, line: valid.err.line, column: valid.err.col })
  }
  const parser = new XMLParser({
    preserveOrder: true,
    processEntities: false,
    htmlEntities: false,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    cdataPropName: '#cdata',
    captureMetaData: true,
    allowBooleanAttributes: false,
    removeNSPrefix: false,
    maxNestedTags: maxDepth,
  })
  let raw: unknown
  try {
    raw = parser.parse(xml)
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    if (/nested/i.test(message)) return err({ reason: `elements nested deeper than ${maxDepth} levels` })
    // The parser refuses names such as constructor or __proto__ outright: no IVR name is one.
    const reserved = /Invalid name: "([^"]+)"/.exec(message)?.[1]
    if (reserved !== undefined) {
      const at = xml.search(new RegExp(`[<\\s]${reserved.replace(/[^\w]/g, '\\$&')}[\\s=/>]`))
      return err({ reason: `unknown element or attribute ${JSON.stringify(reserved)}`, ...(at >= 0 ? positions.at(at + 1) : {}) })
    }
    return err({ reason: `not a valid IVR document: ${message}` })
  }
  const junk = trailingText(xml, raw)
  if (junk !== undefined) {
    return err({ reason: `text after the root element: ${JSON.stringify(junk.text.slice(0, 40))}`, ...positions.at(junk.at) })
  }
  return new Converter(positions).nodes(raw)
}
