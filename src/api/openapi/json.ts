/**
 * The JSON value types the OpenAPI document is built from. The document is plain JSON (served
 * as bytes, validated by a real OpenAPI validator in test/openapi/), so a precise OpenAPI type
 * model would only restate the specification; these keep the builders free of `any`.
 */
export type Json = string | number | boolean | null | Json[] | JsonObject
export interface JsonObject {
  [key: string]: Json
}

/** A JSON body of this schema (a request's or a reply's `content`). */
export const jsonContent = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } })

/** An operation's `security`: HTTP Basic, the domain and one of its API tokens. */
export const BASIC_AUTH = [{ basicAuth: [] }]

/** A reference to `#/components/<kind>/<name>`. */
export const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers' | 'pathItems' | 'securitySchemes', name: string): JsonObject => ({
  $ref: `#/components/${kind}/${name}`,
})
