/** The IVR expression language: parse once, evaluate per call (docs/ivr.md, "Expressions"). */
export type { Expr, FunctionName } from './ast.js'
export type { EvalEnv, Scope } from './evaluate.js'
export type { Template, TemplatePart } from './template.js'
export type { Value } from './value.js'
// The language's functions: the daemon's modules import them from their own files; test/ivr
// tests the language through this surface.
/** @internal Exported for tests: test/ivr. */
export { parseExpression, MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_NESTING } from './parse.js'
/** @internal Exported for tests: test/ivr. */
export { evaluate, MAX_LIST_LENGTH, MAX_STRING_LENGTH } from './evaluate.js'
/** @internal Exported for tests: test/ivr. */
export { hasTemplate, interpolate, parseTemplate, renderTemplate } from './template.js'
/** @internal Exported for tests: test/ivr. */
export { truthy } from './value.js'
