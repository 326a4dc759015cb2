/**
 * The JSON value types the OpenAPI document is built from. The document is plain JSON (served
 * as bytes, validated by a real OpenAPI validator in test/openapi/), so a precise OpenAPI type
 * model would only restate the specification; these keep the builders free of `any`.
 */
export type Json = string | number | boolean | null | Json[] | JsonObject
export interface JsonObject {
  [key: string]: Json
}

/** A reference to `#/components/<kind>/<name>`. */
export const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers' | 'pathItems' | 'securitySchemes', name: string): JsonObject => ({
  $ref: `#/components/${kind}/${name}`,
})
