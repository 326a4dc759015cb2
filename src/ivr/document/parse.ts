/**
 * Parser and validator of IVR documents (spec/ivr-xml.md, docs/ivr.md). A document is refused
 * as a whole before anything runs: unknown elements and attributes (case-sensitive), wrong
 * nesting, values out of range, bad expressions, GoTo targets that do not exist, limits.
 * The first problem found is reported, with line, column and path, in words an IVR author
 * can act on (the reason goes back to the document's URL as `Error=` and into invalid_xml).
 */
import { hasTemplate, parseTemplate } from '../expr/template.js'
import { parseExpression, RESERVED_WORDS } from '../expr/parse.js'
import { err, ok, type Result } from '../../util/result.js'
import * as C from './checks.js'
import { literal, quote } from './params.js'
import type {
  CondClause,
  IvrDocument,
  IvrDocumentError,
  IvrElement,
  IvrLimits,
  Param,
  ParsedExpr,
  Prompt,
  SourcePos,
  SwitchCase,
  ValueCheck,
} from './types.js'
import { DEFAULT_IVR_LIMITS } from './types.js'
import { readXml, type XmlElement, type XmlNode } from './xml.js'

/** Variables the daemon sets itself (call parameters); Set and GetJSON may not overwrite them. */
export const CALL_PARAMETERS: ReadonlySet<string> = new Set([
  'CallUUID',
  'CallStatus',
  'Direction',
  'CalledNumber',
  'CallingNumber',
  'CallerName',
  'DomainName',
  'Anonymous',
  'StartTime',
  'AnswerTime',
  'UserId',
  'UserName',
  'GroupId',
  'GroupName',
  'Digits',
  'TransferFailureReason',
  'Error',
])

export const ROOT_ELEMENTS = ['IVR', 'Response'] as const

/** Every element of the language and its attributes (the spec's table). */
export const ELEMENT_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  IVR: [],
  Response: [],
  Answer: [],
  Play: ['loop', 'terminators'],
  Speak: ['language', 'voice', 'loop'],
  Wait: ['length'],
  GetDigits: ['action', 'timeout', 'interdigitTimeout', 'finishOnKey', 'numDigits', 'validDigits', 'maxTries', 'playBeep'],
  Set: ['var', 'val', 'expr'],
  If: ['expr'],
  Then: [],
  Else: [],
  Switch: ['expr'],
  Case: ['val'],
  Default: [],
  Cond: [],
  Clause: ['expr'],
  Section: ['name'],
  GoTo: [],
  SetErrorHandler: [],
  GetJSON: ['var', 'url', 'method'],
  Redirect: ['method'],
  Transfer: ['callingNumber', 'failureAction', 'answerTimeout'],
  Park: ['timeout'],
  Hangup: ['reason'],
}

/** Elements that run in sequence: the content of the root, Sections, Then, Else, Case, Default, Clause. */
const STATEMENTS: ReadonlySet<string> = new Set([
  'Answer', 'Play', 'Speak', 'Wait', 'GetDigits', 'Set', 'If', 'Switch', 'Cond',
  'GoTo', 'SetErrorHandler', 'GetJSON', 'Redirect', 'Transfer', 'Park', 'Hangup',
])

const PROMPTS: ReadonlySet<string> = new Set(['Play', 'Speak', 'Wait'])

/** Where the structural elements belong, for the message when one is misplaced. */
const ONLY_INSIDE: Readonly<Record<string, string>> = {
  Then: 'only allowed inside <If>',
  Else: 'only allowed inside <If> or <Cond>',
  Case: 'only allowed inside <Switch>',
  Default: 'only allowed inside <Switch>',
  Clause: 'only allowed inside <Cond>',
  Section: 'only allowed at the top level, directly inside the root element',
}

// Ranges and defaults (docs/ivr.md, "Elements"); the spec fixes loop 1-5 and answerTimeout 5-180.
const LOOP = C.intIn(1, 5)
const WAIT_LENGTH = C.secondsIn(0, 3600)
const GETDIGITS_TIMEOUT = C.intIn(1, 300)
const NUM_DIGITS = C.intIn(1, 99)
const MAX_TRIES = C.intIn(1, 10)
const PARK_TIMEOUT = C.intIn(1, 86400)
const ANSWER_TIMEOUT = C.intIn(5, 180)
const METHOD = C.oneOf(['POST', 'GET'] as const)
const HANGUP_REASON = C.oneOf(['rejected', 'busy'] as const)
const TERMINATORS = C.dtmfKeys(0, 16)
const FINISH_ON_KEY = C.dtmfKeys(0, 1)
const VALID_DIGITS = C.dtmfKeys(1, 16)

export const DEFAULTS = {
  playLoop: 1,
  playTerminators: '',
  speakLanguage: 'ja-JP',
  speakLoop: 1,
  waitLength: 1,
  getDigitsTimeout: 5,
  getDigitsInterdigitTimeout: 5,
  getDigitsFinishOnKey: '#',
  getDigitsNumDigits: 99,
  getDigitsValidDigits: '0123456789*#',
  getDigitsMaxTries: 1,
  getDigitsPlayBeep: false,
  method: 'POST',
  transferAnswerTimeout: 30,
  parkTimeout: 21600,
} as const

/** Thrown inside the parser only; parseIvrDocument turns it into an error value. */
class DocumentError {
  constructor(readonly error: IvrDocumentError) {}
}

function fail(pos: SourcePos | undefined, reason: string): never {
  if (pos === undefined) throw new DocumentError({ reason })
  throw new DocumentError({
    reason: `line ${pos.line}, column ${pos.column} (${pos.path}): ${reason}`,
    line: pos.line,
    column: pos.column,
    path: pos.path,
  })
}

const isBlank = (s: string): boolean => s.trim() === ''

function suggestion(name: string): string {
  const lower = name.toLowerCase()
  const known = Object.keys(ELEMENT_ATTRIBUTES).find((k) => k.toLowerCase() === lower)
  return known !== undefined ? ` (names are case-sensitive: did you mean <${known}>?)` : ''
}

/** An element being read: its XML node, position, and its attributes (names already checked). */
interface Node {
  readonly el: XmlElement
  readonly pos: SourcePos
  readonly attrs: ReadonlyMap<string, string>
}

interface SectionRef {
  readonly name: string
  readonly pos: SourcePos
  readonly what: string
}

class DocumentParser {
  private elements = 0
  private readonly sectionRefs: SectionRef[] = []

  constructor(private readonly limits: IvrLimits) {}

  document(root: XmlElement): IvrDocument {
    const rootNode = this.enter(root, `/${root.name}`, 1, [])
    const body: IvrElement[] = []
    const sections = new Map<string, readonly IvrElement[]>()
    for (const child of this.childElements(rootNode, `<${root.name}>`)) {
      if (child.el.name !== 'Section' && !STATEMENTS.has(child.el.name)) {
        this.misplaced(child.el, child.path, `<${root.name}>`)
      }
      const node = this.enter(child.el, child.path, 2, undefined)
      if (node.el.name === 'Section') {
        const name = this.literalAttr(node, 'name', C.sectionName, 'Section name')
        if (sections.has(name)) fail(node.pos, `a Section named ${quote(name)} is defined twice`)
        sections.set(name, this.body(node, 2))
      } else {
        body.push(this.statement(node, 2))
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

  /**
   * Counts the element, checks depth and attribute names and sizes. `allowed` undefined means
   * the spec table's list for the element name.
   */
  private enter(el: XmlElement, path: string, depth: number, allowed: readonly string[] | undefined): Node {
    const pos: SourcePos = { line: el.line, column: el.column, path }
    if (++this.elements > this.limits.maxElements) fail(pos, `more than ${this.limits.maxElements} elements`)
    if (depth > this.limits.maxDepth) fail(pos, `elements nested deeper than ${this.limits.maxDepth} levels`)
    const known = Object.hasOwn(ELEMENT_ATTRIBUTES, el.name) ? ELEMENT_ATTRIBUTES[el.name] : undefined
    if (known === undefined) fail(pos, `unknown element <${el.name}>${suggestion(el.name)}`)
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
    return { el, pos, attrs }
  }

  /** The element children of a container, with their paths; text must be blank. */
  private childElements(node: Node, where: string): { el: XmlElement; path: string }[] {
    const seen = new Map<string, number>()
    const out: { el: XmlElement; path: string }[] = []
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

  /** The statements inside a Section, Then, Else, Case, Default or Clause. */
  private body(node: Node, depth: number): IvrElement[] {
    return this.childElements(node, `<${node.el.name}>`).map((c) => {
      if (!STATEMENTS.has(c.el.name)) this.misplaced(c.el, c.path, `<${node.el.name}>`)
      return this.statement(this.enter(c.el, c.path, depth + 1, undefined), depth + 1)
    })
  }

  private misplaced(el: XmlElement, path: string, where: string): never {
    const pos: SourcePos = { line: el.line, column: el.column, path }
    const rule = ONLY_INSIDE[el.name]
    if (rule !== undefined && Object.hasOwn(ONLY_INSIDE, el.name)) fail(pos, `<${el.name}> is ${rule}, not in ${where}`)
    if (!Object.hasOwn(ELEMENT_ATTRIBUTES, el.name)) fail(pos, `unknown element <${el.name}>${suggestion(el.name)}`)
    return fail(pos, `<${el.name}> is not allowed in ${where}`)
  }

  /** The text content of an element that takes text; child elements are errors. */
  private text(node: Node): string {
    let s = ''
    for (const child of node.el.children) {
      if (child.kind === 'element') fail(node.pos, `<${node.el.name}> takes text, not elements (found <${child.name}>)`)
      if (child.kind === 'pi') fail(node.pos, `processing instructions (<?${child.name} ...?>) are not allowed`)
      else s += child.text
    }
    if (Buffer.byteLength(s) > this.limits.maxTextBytes) {
      fail(node.pos, `the text of <${node.el.name}> is longer than ${this.limits.maxTextBytes} bytes`)
    }
    return s.trim()
  }

  /** Leaf elements without text: nothing but blanks inside. */
  private empty(node: Node): void {
    for (const child of node.el.children) {
      if (child.kind === 'element') fail(node.pos, `<${node.el.name}> takes no child elements (found <${child.name}>)`)
      if (child.kind === 'pi') fail(node.pos, `processing instructions (<?${child.name} ...?>) are not allowed`)
      if (!isBlank(child.text)) fail(node.pos, `<${node.el.name}> takes no text (found ${quote(child.text.trim())})`)
    }
  }

  /** A value that may hold `{{ }}`: a template for run time, else checked now. */
  private value<T>(node: Node, label: string, raw: string, check: ValueCheck<T>): Param<T> {
    if (hasTemplate(raw)) {
      const t = parseTemplate(raw)
      if (!t.ok) fail(node.pos, `${label} ${quote(raw)}: ${t.error}`)
      return { kind: 'template', template: t.value, check, label }
    }
    const v = check.convert(raw)
    if (!v.ok) fail(node.pos, `${label} ${quote(raw)}: ${v.error}`)
    return literal(v.value)
  }

  private attr<T>(node: Node, name: string, check: ValueCheck<T>, dflt: T): Param<T> {
    const raw = node.attrs.get(name)
    return raw === undefined ? literal(dflt) : this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  private optionalAttr<T>(node: Node, name: string, check: ValueCheck<T>): Param<T> | undefined {
    const raw = node.attrs.get(name)
    return raw === undefined ? undefined : this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  private requiredAttr<T>(node: Node, name: string, check: ValueCheck<T>): Param<T> {
    const raw = node.attrs.get(name)
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a ${name} attribute (${check.rule})`)
    return this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  /** Attributes that must be known at validation time (names): no templates. */
  private literalAttr<T>(node: Node, name: string, check: ValueCheck<T>, label: string): T {
    const raw = node.attrs.get(name)
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a ${name} attribute (${check.rule})`)
    if (hasTemplate(raw)) fail(node.pos, `${label} cannot use {{ }}: it must be known before the call runs`)
    const v = check.convert(raw)
    if (!v.ok) fail(node.pos, `${label} ${quote(raw)}: ${v.error}`)
    return v.value
  }

  private textValue<T>(node: Node, what: string, check: ValueCheck<T>): Param<T> {
    const s = this.text(node)
    if (s === '') fail(node.pos, `<${node.el.name}> needs text: ${what}`)
    return this.value(node, `${node.el.name} text`, s, check)
  }

  private varName(node: Node): string {
    const raw = node.attrs.get('var')
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a var attribute (the variable's name)`)
    if (!C.VAR_NAME_RE.test(raw)) {
      fail(node.pos, `${node.el.name} var ${quote(raw)}: must be a name of letters, digits and _ (not starting with a digit, at most 64)`)
    }
    if (RESERVED_WORDS.has(raw)) fail(node.pos, `${node.el.name} var ${quote(raw)}: is a reserved word of expressions`)
    if (CALL_PARAMETERS.has(raw)) fail(node.pos, `${node.el.name} var ${quote(raw)}: is a call parameter and cannot be set`)
    return raw
  }

  private expr(node: Node): ParsedExpr {
    const source = node.attrs.get('expr')
    if (source === undefined) fail(node.pos, `<${node.el.name}> needs an expr attribute`)
    const e = parseExpression(source)
    if (!e.ok) fail(node.pos, `${node.el.name} expr ${quote(source)}: ${e.error}`)
    return { source, ast: e.value }
  }

  private sectionTarget(node: Node, p: Param<string>, what: string): void {
    if (p.kind === 'literal') this.sectionRefs.push({ name: p.value, pos: node.pos, what })
  }

  private statement(node: Node, depth: number): IvrElement {
    const pos = node.pos
    switch (node.el.name) {
      case 'Answer':
        this.empty(node)
        return { type: 'Answer', pos }
      case 'Play':
      case 'Speak':
      case 'Wait':
        return this.prompt(node)
      case 'GetDigits':
        return this.getDigits(node, depth)
      case 'Set': {
        this.empty(node)
        const name = this.varName(node)
        const val = node.attrs.get('val')
        const hasExpr = node.attrs.has('expr')
        if (val !== undefined && hasExpr) fail(pos, '<Set> takes either val or expr, not both')
        if (val === undefined && !hasExpr) fail(pos, '<Set> needs a val (text) or an expr (expression) attribute')
        const value =
          val !== undefined
            ? { kind: 'val' as const, val: this.value(node, 'Set val', val, C.text(true)) }
            : { kind: 'expr' as const, expr: this.expr(node) }
        return { type: 'Set', pos, var: name, value }
      }
      case 'If':
        return this.ifElement(node, depth)
      case 'Switch':
        return this.switchElement(node, depth)
      case 'Cond':
        return this.condElement(node, depth)
      case 'GoTo':
      case 'SetErrorHandler': {
        const section = this.textValue(node, 'the name of a Section', C.sectionName)
        this.sectionTarget(node, section, node.el.name)
        return node.el.name === 'GoTo' ? { type: 'GoTo', pos, section } : { type: 'SetErrorHandler', pos, section }
      }
      case 'GetJSON':
        this.empty(node)
        return {
          type: 'GetJSON',
          pos,
          var: this.varName(node),
          url: this.requiredAttr(node, 'url', C.urlList),
          method: this.attr(node, 'method', METHOD, DEFAULTS.method),
        }
      case 'Redirect':
        return {
          type: 'Redirect',
          pos,
          method: this.attr(node, 'method', METHOD, DEFAULTS.method),
          url: this.textValue(node, 'the URL of the next document', C.urlList),
        }
      case 'Transfer': {
        const failureAction = this.optionalAttr(node, 'failureAction', C.failureAction)
        if (failureAction?.kind === 'literal' && failureAction.value.kind === 'section') {
          this.sectionRefs.push({ name: failureAction.value.name, pos, what: 'Transfer failureAction' })
        }
        return {
          type: 'Transfer',
          pos,
          target: this.textValue(node, 'a user, group, extension, DID or number to connect to', C.transferTarget),
          callingNumber: this.optionalAttr(node, 'callingNumber', C.callingNumber),
          failureAction,
          answerTimeout: this.attr(node, 'answerTimeout', ANSWER_TIMEOUT, DEFAULTS.transferAnswerTimeout),
        }
      }
      case 'Park':
        this.empty(node)
        return { type: 'Park', pos, timeout: this.attr(node, 'timeout', PARK_TIMEOUT, DEFAULTS.parkTimeout) }
      case 'Hangup':
        this.empty(node)
        return { type: 'Hangup', pos, reason: this.optionalAttr(node, 'reason', HANGUP_REASON) }
      default:
        // Callers only pass STATEMENTS; this keeps the switch total if the table grows.
        return fail(pos, `<${node.el.name}> is not allowed here`)
    }
  }

  private prompt(node: Node): Prompt {
    const pos = node.pos
    switch (node.el.name) {
      case 'Play':
        return {
          type: 'Play',
          pos,
          loop: this.attr(node, 'loop', LOOP, DEFAULTS.playLoop),
          terminators: this.attr(node, 'terminators', TERMINATORS, DEFAULTS.playTerminators),
          source: this.textValue(node, 'the audio file or http(s) URL to play', C.audioSource),
        }
      case 'Speak':
        return {
          type: 'Speak',
          pos,
          language: this.attr(node, 'language', C.language, DEFAULTS.speakLanguage),
          voice: this.optionalAttr(node, 'voice', C.voice),
          loop: this.attr(node, 'loop', LOOP, DEFAULTS.speakLoop),
          text: this.textValue(node, 'the words to speak', C.text(false)),
        }
      default:
        this.empty(node)
        return { type: 'Wait', pos, length: this.attr(node, 'length', WAIT_LENGTH, DEFAULTS.waitLength) }
    }
  }

  private getDigits(node: Node, depth: number): IvrElement {
    const prompts: Prompt[] = []
    const alerts: Prompt[] = []
    for (const c of this.childElements(node, '<GetDigits>')) {
      if (!PROMPTS.has(c.el.name)) {
        const pos: SourcePos = { line: c.el.line, column: c.el.column, path: c.path }
        if (!Object.hasOwn(ELEMENT_ATTRIBUTES, c.el.name)) fail(pos, `unknown element <${c.el.name}>${suggestion(c.el.name)}`)
        fail(pos, `<GetDigits> may contain only <Play>, <Speak> and <Wait>, found <${c.el.name}>`)
      }
      const allowed = [...(ELEMENT_ATTRIBUTES[c.el.name] ?? []), 'purpose']
      const child = this.enter(c.el, c.path, depth + 1, allowed)
      const purpose = child.attrs.get('purpose')
      if (purpose !== undefined && purpose !== 'alert') {
        fail(child.pos, `${c.el.name} purpose ${quote(purpose)}: must be alert (or absent for a prompt)`)
      }
      ;(purpose === 'alert' ? alerts : prompts).push(this.prompt(child))
    }
    return {
      type: 'GetDigits',
      pos: node.pos,
      action: this.optionalAttr(node, 'action', C.urlList),
      timeout: this.attr(node, 'timeout', GETDIGITS_TIMEOUT, DEFAULTS.getDigitsTimeout),
      interdigitTimeout: this.attr(node, 'interdigitTimeout', GETDIGITS_TIMEOUT, DEFAULTS.getDigitsInterdigitTimeout),
      finishOnKey: this.attr(node, 'finishOnKey', FINISH_ON_KEY, DEFAULTS.getDigitsFinishOnKey),
      numDigits: this.attr(node, 'numDigits', NUM_DIGITS, DEFAULTS.getDigitsNumDigits),
      validDigits: this.attr(node, 'validDigits', VALID_DIGITS, DEFAULTS.getDigitsValidDigits),
      maxTries: this.attr(node, 'maxTries', MAX_TRIES, DEFAULTS.getDigitsMaxTries),
      playBeep: this.attr(node, 'playBeep', C.bool, DEFAULTS.getDigitsPlayBeep),
      prompts,
      alerts,
    }
  }

  /**
   * The branch children of If, Switch and Cond: only the listed names, in the given order
   * (e.g. Then before Else), each entered and returned in document order.
   */
  private branches(node: Node, allowed: readonly string[], depth: number): Node[] {
    const where = `<${node.el.name}>`
    const out: Node[] = []
    for (const c of this.childElements(node, where)) {
      if (!allowed.includes(c.el.name)) {
        const pos: SourcePos = { line: c.el.line, column: c.el.column, path: c.path }
        if (STATEMENTS.has(c.el.name) || Object.hasOwn(ONLY_INSIDE, c.el.name)) {
          fail(pos, `${where} may contain only ${allowed.map((a) => `<${a}>`).join(', ')}, found <${c.el.name}>`)
        }
        this.misplaced(c.el, c.path, where)
      }
      out.push(this.enter(c.el, c.path, depth + 1, undefined))
    }
    return out
  }

  private ifElement(node: Node, depth: number): IvrElement {
    const expr = this.expr(node)
    const kids = this.branches(node, ['Then', 'Else'], depth)
    const thens = kids.filter((k) => k.el.name === 'Then')
    const elses = kids.filter((k) => k.el.name === 'Else')
    if (thens.length !== 1) fail(node.pos, `<If> needs exactly one <Then>, found ${thens.length}`)
    if (elses.length > 1) fail(node.pos, '<If> may have only one <Else>')
    if (kids[0]?.el.name !== 'Then') fail(node.pos, '<Then> must come before <Else>')
    return {
      type: 'If',
      pos: node.pos,
      expr,
      then: this.body(thens[0] as Node, depth + 1),
      else: elses[0] ? this.body(elses[0], depth + 1) : [],
    }
  }

  private switchElement(node: Node, depth: number): IvrElement {
    const expr = this.expr(node)
    const kids = this.branches(node, ['Case', 'Default'], depth)
    if (kids.length === 0) fail(node.pos, '<Switch> needs at least one <Case>')
    const cases: SwitchCase[] = []
    const seen = new Set<string>()
    let dflt: IvrElement[] = []
    kids.forEach((k, i) => {
      if (k.el.name === 'Default') {
        if (i !== kids.length - 1) fail(k.pos, '<Default> must be the last child of <Switch>')
        dflt = this.body(k, depth + 1)
        return
      }
      const val = this.requiredAttr(k, 'val', C.text(true))
      if (val.kind === 'literal') {
        if (seen.has(val.value)) fail(k.pos, `a <Case> with val ${quote(val.value)} is already in this <Switch>`)
        seen.add(val.value)
      }
      cases.push({ pos: k.pos, val, body: this.body(k, depth + 1) })
    })
    return { type: 'Switch', pos: node.pos, expr, cases, default: dflt }
  }

  private condElement(node: Node, depth: number): IvrElement {
    const kids = this.branches(node, ['Clause', 'Else'], depth)
    const clauses: CondClause[] = []
    let otherwise: IvrElement[] = []
    kids.forEach((k, i) => {
      if (k.el.name === 'Else') {
        if (i !== kids.length - 1) fail(k.pos, '<Else> must be the last child of <Cond>')
        otherwise = this.body(k, depth + 1)
        return
      }
      clauses.push({ pos: k.pos, expr: this.expr(k), body: this.body(k, depth + 1) })
    })
    if (clauses.length === 0) fail(node.pos, '<Cond> needs at least one <Clause>')
    return { type: 'Cond', pos: node.pos, clauses, else: otherwise }
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
