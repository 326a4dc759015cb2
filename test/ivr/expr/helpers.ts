import { evaluate, parseExpression, type EvalEnv, type Scope, type Value } from '../../../src/ivr/expr/index.js'
import type { Result } from '../../../src/util/result.js'

/** 2024-03-04 (a Monday) 23:30 UTC: already Tuesday morning in Tokyo. */
const FIXED = new Date('2024-03-04T23:30:00Z')
export const tokyo: EvalEnv = { timeZone: 'Asia/Tokyo', now: () => FIXED }

/** Parses and evaluates; a parse error is returned as `parse: <message>` so tests can tell them apart. */
export function run(src: string, scope: Scope = new Map(), env: EvalEnv = tokyo): Result<Value, string> {
  const p = parseExpression(src)
  if (!p.ok) return { ok: false, error: `parse: ${p.error}` }
  return evaluate(p.value, scope, env)
}
