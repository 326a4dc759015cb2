/**
 * Reading attribute and text values of an element: required and optional attributes with
 * their defaults, element text, variable names and expressions. A value is checked by its
 * ValueCheck now when it is written literally, and kept as a template (checked when it runs)
 * when it holds `{{ }}`; every refusal names the element, the attribute and the rule.
 */
import { parseExpression, RESERVED_WORDS } from '../expr/parse.js'
import { hasTemplate, parseTemplate } from '../expr/template.js'
import { VAR_NAME_RE } from './checks.js'
import { literal, quote } from './params.js'
import { fail, isBlank, type ElementNode, type ValueReading } from './reader.js'
import type { IvrLimits, Param, ParsedExpr, ValueCheck } from './types.js'

/** Variables the daemon sets itself (call parameters); Set and GetJSON may not overwrite them. */
const CALL_PARAMETERS: ReadonlySet<string> = new Set([
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
  // Record's and GetInput's results (elements/record.ts, elements/get-input.ts).
  'RecordingId',
  'RecordingUrl',
  'RecordingDuration',
  'InputType',
  'Speech',
  'Confidence',
  // A fax's results (fax/result.ts) and the call's length, sent at its end (runner/session.ts complete).
  'FaxOperation',
  'FaxFilePath',
  'FaxResultCode',
  'FaxResultText',
  'FaxPages',
  'CallDuration',
])

export class ValueReader implements ValueReading {
  constructor(protected readonly limits: IvrLimits) {}

  value<T>(node: ElementNode, label: string, raw: string, check: ValueCheck<T>): Param<T> {
    if (hasTemplate(raw)) {
      const t = parseTemplate(raw)
      if (!t.ok) fail(node.pos, `${label} ${quote(raw)}: ${t.error}`)
      return { kind: 'template', template: t.value, check, label }
    }
    const v = check.convert(raw)
    if (!v.ok) fail(node.pos, `${label} ${quote(raw)}: ${v.error}`)
    return literal(v.value)
  }

  attr<T>(node: ElementNode, name: string, check: ValueCheck<T>, dflt: T): Param<T> {
    const raw = node.attrs.get(name)
    return raw === undefined ? literal(dflt) : this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  optionalAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>): Param<T> | undefined {
    const raw = node.attrs.get(name)
    return raw === undefined ? undefined : this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  requiredAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>): Param<T> {
    const raw = node.attrs.get(name)
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a ${name} attribute (${check.rule})`)
    return this.value(node, `${node.el.name} ${name}`, raw, check)
  }

  literalAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>, label: string): T {
    const raw = node.attrs.get(name)
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a ${name} attribute (${check.rule})`)
    if (hasTemplate(raw)) fail(node.pos, `${label} cannot use {{ }}: it must be known before the call runs`)
    const v = check.convert(raw)
    if (!v.ok) fail(node.pos, `${label} ${quote(raw)}: ${v.error}`)
    return v.value
  }

  text(node: ElementNode): string {
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

  textValue<T>(node: ElementNode, what: string, check: ValueCheck<T>): Param<T> {
    const s = this.text(node)
    if (s === '') fail(node.pos, `<${node.el.name}> needs text: ${what}`)
    return this.value(node, `${node.el.name} text`, s, check)
  }

  empty(node: ElementNode): void {
    for (const child of node.el.children) {
      if (child.kind === 'element') fail(node.pos, `<${node.el.name}> takes no child elements (found <${child.name}>)`)
      if (child.kind === 'pi') fail(node.pos, `processing instructions (<?${child.name} ...?>) are not allowed`)
      if (!isBlank(child.text)) fail(node.pos, `<${node.el.name}> takes no text (found ${quote(child.text.trim())})`)
    }
  }

  varName(node: ElementNode): string {
    const raw = node.attrs.get('var')
    if (raw === undefined) fail(node.pos, `<${node.el.name}> needs a var attribute (the variable's name)`)
    if (!VAR_NAME_RE.test(raw)) {
      fail(node.pos, `${node.el.name} var ${quote(raw)}: must be a name of letters, digits and _ (not starting with a digit, at most 64)`)
    }
    if (RESERVED_WORDS.has(raw)) fail(node.pos, `${node.el.name} var ${quote(raw)}: is a reserved word of expressions`)
    if (CALL_PARAMETERS.has(raw)) fail(node.pos, `${node.el.name} var ${quote(raw)}: is a call parameter and cannot be set`)
    return raw
  }

  expr(node: ElementNode): ParsedExpr {
    const source = node.attrs.get('expr')
    if (source === undefined) fail(node.pos, `<${node.el.name}> needs an expr attribute`)
    const e = parseExpression(source)
    if (!e.ok) fail(node.pos, `${node.el.name} expr ${quote(source)}: ${e.error}`)
    return { source, ast: e.value }
  }
}
