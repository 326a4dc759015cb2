/** IVR documents: decode, parse and validate, and resolve templated values at run time. */
export * from '../syntax/types.js'
export { parseIvrDocument } from './parse.js'
export { decodeInlineXml } from './inline.js'
/** @internal Exported for tests: test/ivr/document resolves values through them. */
export { resolveParam, resolveOptional } from '../syntax/params.js'
// What a runner needs to resolve values, from one import.
export type { EvalEnv, Scope, Value } from '../expr/index.js'
