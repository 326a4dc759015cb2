/**
 * Run-time side of attribute checking: a templated value is rendered with the call's variables
 * and then held to the same rule the parser applies to literal values.
 */
import type { EvalEnv, Scope } from '../expr/evaluate.js'
import { renderTemplate } from '../expr/template.js'
import { err, ok, type Result } from '../../util/result.js'
import type { Param, ValueCheck } from './types.js'

/** Shortens long values in messages (they travel in a form parameter and in logs). */
export function quote(s: string): string {
  const json = JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}...` : s)
  // JSON leaves DEL and the C1 controls as they are; a message must show them, not carry them.
  return json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

export function literal<T>(value: T): Param<T> {
  return { kind: 'literal', value }
}

/**
 * The value of an attribute or text when the element runs. The error names the element and
 * attribute, the template and what it gave, e.g.
 * `GetDigits timeout "{{ t }}" gave "abc": must be a whole number from 1 to 300`.
 */
export function resolveParam<T>(p: Param<T>, scope: Scope, env: EvalEnv): Result<T, string> {
  if (p.kind === 'literal') return ok(p.value)
  const rendered = renderTemplate(p.template, scope, env)
  if (!rendered.ok) return err(`${p.label} ${quote(p.template.source)}: ${rendered.error}`)
  const v = p.check.convert(rendered.value)
  return v.ok ? v : err(`${p.label} ${quote(p.template.source)} gave ${quote(rendered.value)}: ${v.error}`)
}

/** Same as resolveParam for an optional attribute: absent stays undefined. */
export function resolveOptional<T>(p: Param<T> | undefined, scope: Scope, env: EvalEnv): Result<T | undefined, string> {
  return p === undefined ? ok(undefined) : resolveParam(p, scope, env)
}

export type { Param, ValueCheck }
