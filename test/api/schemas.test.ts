/**
 * The request schemas (operations/<operation>/schema.ts) and the zod-issue adapter
 * (schema/parse.ts): every operation has a schema that JSON Schema can describe, with a
 * description on every field, and the first zod issue becomes the API error the operations
 * have always answered (unknown keys first, absent vs null, nested paths, union branches).
 */
import t from 'tap'
import { z } from 'zod'
import { OPERATIONS, REQUEST_SCHEMAS } from '../../src/api/operations/index.js'
import { errorIdParams, parseWith } from '../../src/api/schema/parse.js'
import { pstnPartySchema } from '../../src/api/schema/party.js'
import { requestBody } from '../../src/api/schema/request.js'

type JsonSchema = { description?: string; properties?: Record<string, JsonSchema> }

t.test('every operation has a schema that converts to JSON Schema, every field described', async (t) => {
  t.same(Object.keys(REQUEST_SCHEMAS).sort(), Object.keys(OPERATIONS).sort())
  for (const [op, schema] of Object.entries(REQUEST_SCHEMAS)) {
    const json = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema & { additionalProperties?: boolean }
    t.equal(json.additionalProperties, false, `${op}: unknown keys are refused`)
    t.ok(json.description, `${op}: the operation is described`)
    for (const [key, field] of Object.entries(json.properties ?? {})) t.ok(field.description, `${op}.${key} is described`)
  }
})

const body = requestBody({
  a: z.string('must be a string').min(1, 'must not be empty'),
  b: z.string('must be a string').optional(),
  party: pstnPartySchema(true).optional(),
}).superRefine((v, ctx) => {
  if (v.b === 'forbidden') ctx.addIssue({ code: 'custom', message: 'b is forbidden here', params: errorIdParams('destination_not_allowed'), input: v })
})

const error = (input: unknown) => {
  const r = parseWith(body, input)
  return r.ok ? undefined : r.error
}

t.test('the first issue as the API words it', async (t) => {
  t.same(error('x'), { id: 'invalid_parameter', description: 'the request body must be a JSON object' })
  t.same(error({}), { id: 'missing_parameter', description: 'a is required' }, 'absent: missing')
  t.same(error({ a: null }), { id: 'invalid_parameter', description: 'a: must be a string' }, 'null: a wrong type, not an absence')
  t.same(error({ a: '' }), { id: 'invalid_parameter', description: 'a: must not be empty' })
  t.same(error({ a: 1, zz: 1, yy: 2 }), { id: 'invalid_parameter', description: 'zz: unknown parameter' }, 'unknown keys first, the first by name')
  t.same(error({ a: 'x', b: 'forbidden' }), { id: 'destination_not_allowed', description: 'b is forbidden here' }, 'a custom issue carries its id')
})

t.test('nested objects and unions', async (t) => {
  t.same(error({ a: 'x', party: 7 }), { id: 'invalid_parameter', description: 'party: must be a string or an object {called_number, calling_number, end_user}' })
  t.same(error({ a: 'x', party: {} }), { id: 'missing_parameter', description: 'party.called_number is required' }, 'an object is explained by the object form')
  t.same(error({ a: 'x', party: { called_number: 'x', extra: 1 } }), { id: 'invalid_parameter', description: 'party.extra: unknown parameter' })
  t.same(error({ a: 'x', party: { called_number: '0311112222', end_user: { name: '' } } }), {
    id: 'invalid_parameter',
    description: 'party.end_user.name: must not be empty',
  })
  t.same(error({ a: 'x', party: '{nick=x}0311112222' }), {
    id: 'invalid_parameter',
    description: 'party: unknown end_user prefix key; keys are id, name, organization, avatar, prefecture',
  }, 'a string is explained by the string form')
  const ok = parseWith(body, { a: 'x', party: '{name=Jane%20Doe}0311112222' })
  t.same(ok.ok && ok.value.party, { number: '0311112222', endUser: { name: 'Jane Doe' } }, 'the parse gives the party')
})
