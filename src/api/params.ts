/**
 * Parameter checks for requests that have no request schema of their own yet: the CTI's
 * ticket route, WebSocket query and commands. They word their errors like the API
 * (`<parameter>: <rule>`, `<parameter> is required`) and take their rules from the same
 * schemas, so both doors answer alike. The API's operations do not use this module: their
 * bodies go through operations/<operation>/schema.ts.
 */
import { apiError, type ApiError } from './errors.js'
import { parseWith } from './schema/parse.js'
import { timeoutSchema } from './schema/scalars.js'
import { err, ok, type Result } from '../util/result.js'

export { oneOf } from './schema/identifiers.js'
export { resolveUser } from './records.js'

export type Body = Readonly<Record<string, unknown>>

export const invalid = (param: string, rule: string): ApiError => apiError('invalid_parameter', `${param}: ${rule}`)
export const missing = (param: string, rule = 'is required'): ApiError => apiError('missing_parameter', `${param} ${rule}`)

export const has = (body: Body, key: string): boolean => Object.hasOwn(body, key)

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The request body must be a JSON object. */
export function asBody(body: unknown): Result<Body, ApiError> {
  return isPlainObject(body) ? ok(body) : err(apiError('invalid_parameter', 'the request body must be a JSON object'))
}

/** A typo must not pass silently: every key outside `allowed` is refused by name. */
export function rejectUnknown(obj: Body, allowed: readonly string[], where = ''): Result<void, ApiError> {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) return err(invalid(`${where}${key}`, 'unknown parameter'))
  }
  return ok(undefined)
}

/** An optional timeout (schema/scalars.ts): a whole number of seconds from 1 to 3600, or its digits. */
export function optionalTimeout(body: Body, key: string): Result<number | undefined, ApiError> {
  return has(body, key) ? parseWith(timeoutSchema, body[key], [key]) : ok(undefined)
}
