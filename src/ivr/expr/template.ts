/**
 * `{{ expression }}` in element text and attribute values. A template is parsed once, when the
 * document is validated, and rendered each time the element runs; every value is written with
 * str() (null becomes the empty string). There is no escape syntax: a literal `{{` is written
 * as an expression, `{{ '{{' }}`.
 */
import { err, ok, type Result } from '../../util/result.js'
import type { Expr } from './ast.js'
import { evaluate, MAX_STRING_LENGTH, type EvalEnv, type Scope } from './evaluate.js'
import { parseExpression } from './parse.js'
import { toText } from './value.js'

export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'expr'; readonly source: string; readonly expr: Expr }

export interface Template {
  /** The text as written, for messages. */
  readonly source: string
  readonly parts: readonly TemplatePart[]
}

/** Whether a string needs parseTemplate at all (plain text stays a plain string). */
export const hasTemplate = (s: string): boolean => s.includes('{{')

/** Finds the `}}` that closes an expression starting at `from`, skipping quoted strings. */
function closingBraces(src: string, from: number): number {
  let inString = false
  for (let i = from; i < src.length; i++) {
    const c = src[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === "'") inString = false
    } else if (c === "'") {
      inString = true
    } else if (c === '}' && src[i + 1] === '}') {
      return i
    }
  }
  return -1
}

export function parseTemplate(src: string): Result<Template, string> {
  const parts: TemplatePart[] = []
  let i = 0
  while (i < src.length) {
    const open = src.indexOf('{{', i)
    if (open < 0) {
      parts.push({ kind: 'text', text: src.slice(i) })
      break
    }
    if (open > i) parts.push({ kind: 'text', text: src.slice(i, open) })
    const close = closingBraces(src, open + 2)
    if (close < 0) return err(`{{ at character ${open + 1} has no closing }}`)
    const source = src.slice(open + 2, close).trim()
    if (source === '') return err(`empty {{ }} at character ${open + 1}`)
    const expr = parseExpression(source)
    if (!expr.ok) return err(`in {{ ${source} }}: ${expr.error}`)
    parts.push({ kind: 'expr', source, expr: expr.value })
    i = close + 2
  }
  return ok({ source: src, parts })
}

export function renderTemplate(t: Template, scope: Scope, env: EvalEnv): Result<string, string> {
  let out = ''
  for (const p of t.parts) {
    if (p.kind === 'text') {
      out += p.text
      continue
    }
    const v = evaluate(p.expr, scope, env)
    if (!v.ok) return err(`in {{ ${p.source} }}: ${v.error}`)
    out += toText(v.value)
    if (out.length > MAX_STRING_LENGTH) return err(`text longer than ${MAX_STRING_LENGTH} characters`)
  }
  return ok(out)
}

/**
 * Parses and renders in one step (for strings that are not kept, e.g. in tests and tools).
 * @internal Exported for tests: test/ivr/expr parses and renders through it.
 */
export function interpolate(src: string, scope: Scope, env: EvalEnv): Result<string, string> {
  const t = parseTemplate(src)
  return t.ok ? renderTemplate(t.value, scope, env) : t
}
