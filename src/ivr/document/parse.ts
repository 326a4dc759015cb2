/**
 * Parser and validator of IVR documents (docs/ivr.md). A document is refused
 * as a whole before anything runs: unknown elements and attributes (case-sensitive), wrong
 * nesting, values out of range, bad expressions, GoTo targets that do not exist, limits.
 * The first problem found is reported, with line, column and path, in words an IVR author
 * can act on (the reason goes back to the document's URL as `Error=` and into invalid_xml).
 *
 * This file holds what no single element owns: the root and its Sections, counting and
 * nesting limits, attribute names, where each name may appear, and the Section names that
 * elements refer to. Each element reads itself (its module's `parse`, elements/index.ts).
 */
import { ELEMENTS } from '../elements/index.js'
import type { ElementModule } from '../elements/types.js'
import { err, ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import { quote } from '../syntax/params.js'
import { DocumentError, fail, isBlank, positionOf, type ChildElement, type ElementNode, type ParseContext } from '../syntax/reader.js'
import type { IvrDocument, IvrDocumentError, IvrElement, IvrLimits, SourcePos } from '../syntax/types.js'
import { DEFAULT_IVR_LIMITS } from '../syntax/types.js'
import { ValueReader } from '../syntax/values.js'
import { readXml, type XmlElement, type XmlNode } from '../syntax/xml.js'

const ROOT_ELEMENTS = ['IVR', 'Response'] as const

/** Elements that run in sequence (the content of the root, Sections and branches), by name. */
const STATEMENTS: ReadonlyMap<string, ElementModule> = new Map(Object.values(ELEMENTS).map((m: ElementModule) => [m.name, m]))

/** Every element name of the language and its attributes (docs/ivr.md "Elements"). */
const KNOWN = new Map<string, readonly string[]>([
  ...ROOT_ELEMENTS.map((name) => [name, []] as const),
  ['Section', ['name']],
  ...[...STATEMENTS.values()].map((m) => [m.name, m.attributes] as const),
  ...[...STATEMENTS.values()].flatMap((m) => Object.entries(m.branches ?? {})),
])

/** Where the structural elements belong, for the message when one is misplaced. */
const ONLY_INSIDE: ReadonlyMap<string, string> = (() => {
  const parents = new Map<string, string[]>()
  for (const m of STATEMENTS.values()) {
    for (const branch of Object.keys(m.branches ?? {})) parents.set(branch, [...(parents.get(branch) ?? []), `<${m.name}>`])
  }
  return new Map([
    ...[...parents].map(([branch, where]) => [branch, `only allowed inside ${where.join(' or ')}`] as const),
    ['Section', 'only allowed at the top level, directly inside the root element'],
  ])
})()

/**
 * Elements of the language (the Basix element list, docs/ivr.md "Not supported") that need
 * services this daemon does not have: a document using one is refused saying so, not as an
 * unknown element, so that its author knows the name is right and the feature missing.
 */
const UNSUPPORTED: ReadonlyMap<string, string> = new Map([
  ['SendSMS', 'it needs an SMS service'],
  ['AddJob', 'it needs a job scheduling service'],
])

/** Why a name that is no element of the language is refused. */
function unknownElement(name: string): string {
  const unsupported = UNSUPPORTED.get(name)
  if (unsupported !== undefined) return `<${name}> is not supported by this daemon (${unsupported})`
  return `unknown element <${name}>${suggestion(name)}`
}

function suggestion(name: string): string {
  const lower = name.toLowerCase()
  const known = [...KNOWN.keys()].find((k) => k.toLowerCase() === lower)
  return known !== undefined ? ` (names are case-sensitive: did you mean <${known}>?)` : ''
}

interface SectionRef {
  readonly name: string
  readonly pos: SourcePos
  readonly what: string
}

class DocumentParser extends ValueReader implements ParseContext {
  private elements = 0
  private readonly sectionRefs: SectionRef[] = []

  document(root: XmlElement): IvrDocument {
    const rootNode = this.enterAt({ el: root, path: `/${root.name}` }, 1, undefined)
    const body: IvrElement[] = []
    const sections = new Map<string, readonly IvrElement[]>()
    for (const child of this.children(rootNode, `<${root.name}>`)) {
      if (child.el.name !== 'Section' && !STATEMENTS.has(child.el.name)) this.misplaced(child, `<${root.name}>`)
      const node = this.enter(rootNode, child)
      if (node.el.name === 'Section') {
        const name = this.literalAttr(node, 'name', C.sectionName, 'Section name')
        if (sections.has(name)) fail(node.pos, `a Section named ${quote(name)} is defined twice`)
        sections.set(name, this.body(node))
      } else {
        body.push(this.statement(node))
      }
    }
    for (const ref of this.sectionRefs) {
      if (!sections.has(ref.name)) {
        const known = [...sections.keys()]
        const list = known.length > 0 ? ` (Sections: ${known.join(', ')})` : ' (the document has no Sections)'
        fail(ref.pos, `${ref.what}: there is no Section named ${quote(ref.name)}${list}`)
      }
    }
    return { body, sections }
  }

  enter(parent: ElementNode, child: ChildElement, allowed?: readonly string[]): ElementNode {
    return this.enterAt(child, parent.depth + 1, allowed)
  }

  /** Counts the element, checks depth and attribute names and sizes. */
  private enterAt(child: ChildElement, depth: number, allowed: readonly string[] | undefined): ElementNode {
    const { el } = child
    const pos = positionOf(child)
    if (++this.elements > this.limits.maxElements) fail(pos, `more than ${this.limits.maxElements} elements`)
    if (depth > this.limits.maxDepth) fail(pos, `elements nested deeper than ${this.limits.maxDepth} levels`)
    const known = KNOWN.get(el.name)
    if (known === undefined) fail(pos, unknownElement(el.name))
    const names = allowed ?? known
    const attrs = new Map<string, string>()
    for (const [name, value] of el.attrs) {
      if (!names.includes(name)) {
        const list = names.length > 0 ? `allowed: ${names.join(', ')}` : 'it takes no attributes'
        const hint = name === 'purpose' ? '; purpose is only for prompts inside <GetDigits>' : ''
        fail(pos, `unknown attribute ${quote(name)} on <${el.name}> (${list}${hint})`)
      }
      if (Buffer.byteLength(value) > this.limits.maxTextBytes) {
        fail(pos, `attribute ${name} of <${el.name}> is longer than ${this.limits.maxTextBytes} bytes`)
      }
      attrs.set(name, value)
    }
    return { el, pos, attrs, depth }
  }

  children(node: ElementNode, where: string): ChildElement[] {
    const seen = new Map<string, number>()
    const out: ChildElement[] = []
    for (const child of node.el.children) {
      if (child.kind === 'element') {
        const n = (seen.get(child.name) ?? 0) + 1
        seen.set(child.name, n)
        out.push({ el: child, path: `${node.pos.path}/${child.name}[${n}]` })
      } else if (child.kind === 'pi') {
        fail(node.pos, `processing instructions (<?${child.name} ...?>) are not allowed`)
      } else if (!isBlank(child.text)) {
        fail(node.pos, `unexpected text ${quote(child.text.trim())} in ${where} (text belongs in elements such as <Speak>)`)
      }
    }
    return out
  }

  refuseUnknown(child: ChildElement): void {
    if (!KNOWN.has(child.el.name)) fail(positionOf(child), unknownElement(child.el.name))
  }

  body(node: ElementNode): IvrElement[] {
    return this.children(node, `<${node.el.name}>`).map((c) => {
      if (!STATEMENTS.has(c.el.name)) this.misplaced(c, `<${node.el.name}>`)
      return this.statement(this.enter(node, c))
    })
  }

  branches(node: ElementNode, allowed: readonly string[]): ElementNode[] {
    const where = `<${node.el.name}>`
    const out: ElementNode[] = []
    for (const c of this.children(node, where)) {
      if (!allowed.includes(c.el.name)) {
        if (STATEMENTS.has(c.el.name) || ONLY_INSIDE.has(c.el.name)) {
          fail(positionOf(c), `${where} may contain only ${allowed.map((a) => `<${a}>`).join(', ')}, found <${c.el.name}>`)
        }
        this.misplaced(c, where)
      }
      out.push(this.enter(node, c))
    }
    return out
  }

  sectionRef(name: string, pos: SourcePos, what: string): void {
    this.sectionRefs.push({ name, pos, what })
  }

  private misplaced(child: ChildElement, where: string): never {
    const pos = positionOf(child)
    const rule = ONLY_INSIDE.get(child.el.name)
    if (rule !== undefined) fail(pos, `<${child.el.name}> is ${rule}, not in ${where}`)
    this.refuseUnknown(child)
    return fail(pos, `<${child.el.name}> is not allowed in ${where}`)
  }

  private statement(node: ElementNode): IvrElement {
    const module = STATEMENTS.get(node.el.name)
    // Callers only pass STATEMENTS; this keeps the dispatch total if the table grows.
    if (module === undefined) return fail(node.pos, `<${node.el.name}> is not allowed here`)
    return module.parse(node, this)
  }
}

function root(nodes: readonly XmlNode[]): XmlElement {
  let found: XmlElement | undefined
  nodes.forEach((n, i) => {
    if (n.kind === 'pi') {
      // The parser accepts a declaration anywhere; XML allows it only first.
      if (n.name === 'xml' && i === 0) return
      const where = { line: n.line, column: n.column, path: '/' }
      fail(where, n.name === 'xml' ? 'the XML declaration must come first' : `processing instructions (<?${n.name} ...?>) are not allowed`)
    }
    if (n.kind !== 'element') {
      if (!isBlank(n.text)) fail(undefined, `text outside the root element: ${quote(n.text.trim())}`)
      return
    }
    if (found !== undefined) {
      fail({ line: n.line, column: n.column, path: '/' }, `only one root element is allowed, found <${n.name}> after <${found.name}>`)
    }
    found = n
  })
  if (found === undefined) fail(undefined, 'the document has no root element (expected <IVR> or <Response>)')
  if (!(ROOT_ELEMENTS as readonly string[]).includes(found.name)) {
    fail({ line: found.line, column: found.column, path: `/${found.name}` }, `the root element must be <IVR> or <Response>, found <${found.name}>`)
  }
  return found
}

export function parseIvrDocument(xml: string, limits?: Partial<IvrLimits>): Result<IvrDocument, IvrDocumentError> {
  const l: IvrLimits = { ...DEFAULT_IVR_LIMITS, ...limits }
  const size = Buffer.byteLength(xml)
  if (size > l.maxBytes) return err({ reason: `the document is ${size} bytes, more than the limit of ${l.maxBytes}` })
  if (isBlank(xml)) return err({ reason: 'the document is empty' })
  const nodes = readXml(xml, l.maxDepth)
  if (!nodes.ok) {
    const e = nodes.error
    const reason = e.line !== undefined ? `line ${e.line}, column ${e.column ?? 0}: ${e.reason}` : e.reason
    return err({ reason, ...(e.line !== undefined ? { line: e.line, column: e.column } : {}) })
  }
  try {
    return ok(new DocumentParser(l).document(root(nodes.value)))
  } catch (e) {
    if (e instanceof DocumentError) return err(e.error)
    throw e
  }
}
