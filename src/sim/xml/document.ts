/**
 * Reads mod_xml_curl replies into a small element tree, keeping element order (dialplan
 * conditions and actions run in document order). A document that does not parse is refused,
 * as switch_xml refuses it (test/fixtures/freeswitch/xml_curl/10-rejected-dialplan-document.txt:
 * "unclosed tag <document>").
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'

export interface XmlElement {
  readonly name: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: readonly XmlElement[]
  /** Concatenated text content (trimmed). */
  readonly text: string
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  // FreeSWITCH's XML parser decodes numeric character references (switch_xml.c
  // switch_xml_decode: `&#36;` is how documents write a `$` its preprocessor must not see).
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
})

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function convert(node: Record<string, unknown>): XmlElement | undefined {
  let name: string | undefined
  let children: XmlElement[] = []
  let text = ''
  const attrs: Record<string, string> = {}
  for (const [k, v] of Object.entries(node)) {
    if (k === ':@') {
      if (isRecord(v)) for (const [ak, av] of Object.entries(v)) attrs[ak] = String(av)
    } else if (k === '#text') {
      text += String(v)
    } else {
      name = k
      const list = Array.isArray(v) ? v : []
      const converted = convertList(list)
      children = converted.elements
      text += converted.text
    }
  }
  return name === undefined ? undefined : { name, attrs, children, text: text.trim() }
}

function convertList(list: unknown[]): { elements: XmlElement[]; text: string } {
  const elements: XmlElement[] = []
  let text = ''
  for (const item of list) {
    if (!isRecord(item)) continue
    if ('#text' in item && Object.keys(item).length === 1) {
      text += String(item['#text'])
      continue
    }
    const e = convert(item)
    if (e !== undefined) elements.push(e)
  }
  return { elements, text }
}

/** The root element, or undefined when the text is not well-formed XML. */
export function parseXml(text: string): XmlElement | undefined {
  if (XMLValidator.validate(text) !== true) return undefined
  let parsed: unknown
  try {
    parsed = parser.parse(text)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed)) return undefined
  return convertList(parsed).elements[0]
}

export const child = (e: XmlElement, name: string): XmlElement | undefined => e.children.find((c) => c.name === name)
export const childrenNamed = (e: XmlElement, name: string): XmlElement[] => e.children.filter((c) => c.name === name)

/**
 * The `<section name=...>` of a `<document>`, or 'not-found' for the reply that makes
 * FreeSWITCH use its static XML (`<section name="result"><result status="not found"/>`).
 */
export function findSection(root: XmlElement | undefined, section: string): XmlElement | 'not-found' | undefined {
  if (root === undefined || root.name !== 'document') return undefined
  const result = root.children.find((c) => c.name === 'section' && c.attrs['name'] === 'result')
  if (result !== undefined && child(result, 'result')?.attrs['status'] === 'not found') return 'not-found'
  return root.children.find((c) => c.name === 'section' && c.attrs['name'] === section)
}
