/**
 * The zod schemas of the API as the OpenAPI document states them: one schema as a JSON Schema
 * fit for `components.schemas`, and a route's query schema as its query parameters. One place, so
 * that every route's document comes from its own schema the same way (the schema beside the route).
 */
import { z } from 'zod'
import type { JsonObject } from './json.js'

/** One zod schema as a JSON Schema of draft 2020-12 without a `$schema` of its own (the document says the dialect). */
export function jsonSchemaOf(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as JsonObject
  return rest
}

/** A route's query parameters, one per field of its zod schema (all optional, each with its description). */
export function queryParametersOf(schema: z.ZodType): JsonObject[] {
  const { properties } = jsonSchemaOf(schema) as { properties?: Record<string, JsonObject> }
  return Object.entries(properties ?? {}).map(([name, { description, ...rest }]) => ({
    name,
    in: 'query',
    required: false,
    ...(typeof description === 'string' ? { description } : {}),
    schema: rest,
  }))
}
