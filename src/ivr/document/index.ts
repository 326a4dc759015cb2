/** IVR documents: decode, parse and validate, and resolve templated values at run time. */
export * from '../syntax/types.js'
export { parseIvrDocument, CALL_PARAMETERS, ELEMENT_ATTRIBUTES, ROOT_ELEMENTS } from './parse.js'
export { decodeInlineXml } from './inline.js'
export { resolveParam, resolveOptional, quote } from '../syntax/params.js'
export { checkUrl, DTMF_KEYS, SECTION_NAME_RE, VAR_NAME_RE } from '../syntax/checks.js'
// What a runner needs to resolve values, from one import.
export type { EvalEnv, Scope, Value } from '../expr/index.js'
