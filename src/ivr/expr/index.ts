/** The IVR expression language: parse once, evaluate per call (docs/ivr.md, "Expressions"). */
export type { Expr, FunctionName } from './ast.js'
export { FUNCTIONS } from './ast.js'
export { parseExpression, RESERVED_WORDS, MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_NESTING } from './parse.js'
export { evaluate, lookup, MAX_LIST_LENGTH, MAX_STRING_LENGTH, type EvalEnv, type Scope } from './evaluate.js'
export { hasTemplate, interpolate, parseTemplate, renderTemplate, type Template, type TemplatePart } from './template.js'
export { isPlainObject, toText, truthy, typeName, valuesEqual, type Value } from './value.js'
