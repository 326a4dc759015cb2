/**
 * The OpenAPI document (src/api/openapi/): a real OpenAPI 3.1 validator accepts it (and refuses
 * a broken copy, so the check can fail), it covers every operation, every error id with its
 * status from the catalogue, Basic auth, the Idempotency-Key header, and the result callback as
 * a webhook whose headers are the ones an attempt sends and whose body schema takes the bodies
 * the dispatcher makes (answered, not answered, outcome_unknown).
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildOpenApiDocument, API_VERSION } from '../../src/api/openapi/document.js'
import { ERROR_STATUS } from '../../src/api/errors.js'
import { REQUEST_SCHEMAS } from '../../src/api/operations/index.js'
import { attemptHeaders } from '../../src/callbacks/attempt.js'
import { callbackBody, signatureHeader } from '../../src/callbacks/body.js'
import { parseTarget } from '../../src/callbacks/policy.js'
import { answered, notAnswered, outcomeUnknown } from '../../src/origination/outcome.js'
import { documentChecker } from './validate.js'

const doc = buildOpenApiDocument({ prefix: '/api' })
type Obj = Record<string, unknown>
const at = (o: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Obj)[k] : undefined), o)

t.test('a real OpenAPI 3.1 validator accepts the document, and refuses a broken copy', async (t) => {
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc))
  t.same(result, { valid: true }, JSON.stringify(result.errors))
  t.equal(validator.version, '3.1')
  const broken = structuredClone(doc) as Obj
  ;(at(broken, 'paths', '/api/call_user', 'post') as Obj)['responses'] = 'none'
  t.equal((await new Validator().validate(broken)).valid, false, 'a response list that is not an object is refused')
  const noInfo = structuredClone(doc) as Obj
  delete noInfo['info']
  t.equal((await new Validator().validate(noInfo)).valid, false, 'a document without info is refused')
})

t.test('every operation and gen_ws_ticket, under the prefix, Basic auth, request body from its zod schema', async (t) => {
  t.equal(at(doc, 'components', 'securitySchemes', 'basicAuth', 'scheme'), 'basic')
  for (const op of [...Object.keys(REQUEST_SCHEMAS), 'gen_ws_ticket']) {
    const post = at(doc, 'paths', `/api/${op}`, 'post')
    t.ok(post, `${op} is documented`)
    t.same(at(post, 'security'), [{ basicAuth: [] }], `${op} takes Basic auth`)
    t.match(at(post, 'requestBody', 'content', 'application/json', 'schema', '$ref'), /^#\/components\/schemas\/\w+Request$/)
  }
  const callUser = at(doc, 'components', 'schemas', 'CallUserRequest') as Obj
  t.equal(callUser['additionalProperties'], false, 'unknown parameters refused, as the zod schema says')
  t.ok(at(callUser, 'properties', 'callback_url'), 'callback_url from the zod schema')
  t.equal(at(doc, 'paths', '/api/initiate_call', 'post', 'deprecated'), true, 'initiate_call is deprecated, as its schema says')
  t.notOk(at(doc, 'paths', '/api/initiate_call', 'post', 'callbacks'), 'initiate_call takes no callback_url: no callback listed')
  t.ok(at(doc, 'paths', '/api/call_user', 'post', 'callbacks', 'result', '{$request.body#/callback_url}'), 'call_user lists its result callback')
  t.same(at(doc, 'paths', '/healthz', 'get', 'security'), [], '/healthz without auth')
  t.same(at(doc, 'paths', '/api/openapi.json', 'get', 'security'), [], 'the document itself without auth')
  t.equal(at(doc, 'info', 'version'), (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version, 'info.version is the package version')
  t.equal(API_VERSION, at(doc, 'info', 'version'))
})

t.test('every error id of the catalogue with its status; 429 with Retry-After, 401 with WWW-Authenticate; Idempotency-Key', async (t) => {
  const responses = at(doc, 'paths', '/api/call_user', 'post', 'responses') as Obj
  for (const [id, status] of Object.entries(ERROR_STATUS)) {
    // Not an operation's: no such path; no such recording, no such byte range (the recordings routes'); no such live channel, a refused command, a record command's conflict (the live calls routes').
    if (['not_found', 'recording_not_found', 'range_not_satisfiable', 'channel_not_found', 'command_failed', 'recording_conflict'].includes(id)) continue
    t.ok((at(responses, String(status), 'content', 'application/json', 'schema', 'properties', 'error', 'properties', 'id', 'enum') as string[] | undefined)?.includes(id), `${id} under ${status}`)
  }
  t.ok((at(doc, 'components', 'schemas', 'ErrorId', 'enum') as string[]).includes('not_found'), 'not_found is in the catalogue schema')
  t.same(at(doc, 'components', 'schemas', 'ErrorId', 'x-http-status'), ERROR_STATUS)
  t.same(at(responses, '429', 'content', 'application/json', 'schema', 'properties', 'error', 'properties', 'id', 'enum'), ['channel_limit_reached', 'too_many_requests'])
  t.ok(at(responses, '429', 'headers', 'Retry-After'), '429 documents Retry-After')
  t.equal(at(responses, '401', 'headers', 'WWW-Authenticate', 'required'), true)
  t.ok((at(responses, '409', 'content', 'application/json', 'schema', 'properties', 'error', 'properties', 'id', 'enum') as string[]).includes('idempotency_key_reused'))
  t.same(at(doc, 'paths', '/api/call_user', 'post', 'parameters'), [{ $ref: '#/components/parameters/IdempotencyKey' }])
  t.equal(at(doc, 'components', 'parameters', 'IdempotencyKey', 'name'), 'Idempotency-Key')
  const check = documentChecker(doc)
  t.same(check.checkAt(['components', 'parameters', 'IdempotencyKey', 'schema'], 'retry-7'), [])
  t.not(check.checkAt(['components', 'parameters', 'IdempotencyKey', 'schema'], 'has space').length, 0, 'a key with a space is refused, as the API refuses it')
  t.not(check.checkAt(['components', 'parameters', 'IdempotencyKey', 'schema'], 'k'.repeat(256)).length, 0, '256 characters are refused')
})

t.test('the result callback: webhook body takes what the dispatcher sends, headers are those of an attempt', async (t) => {
  t.same(at(doc, 'webhooks', 'resultCallback'), { $ref: '#/components/pathItems/ResultCallback' })
  const check = documentChecker(doc)
  const body = (r: Parameters<typeof callbackBody>[0]) => JSON.parse(callbackBody(r)) as unknown
  for (const r of [answered('0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b'), notAnswered('USER_BUSY'), notAnswered('SOMETHING_NEW'), outcomeUnknown()]) {
    t.same(check.checkAt(['components', 'schemas', 'CallbackBody'], body(r)), [], callbackBody(r))
  }
  t.not(check.checkAt(['components', 'schemas', 'CallbackBody'], { result_code: 500, error: { id: 'exploded', cause: 'X' } }).length, 0, 'an id outside the list is refused')
  t.not(check.checkAt(['components', 'schemas', 'CallbackBody'], { result_code: 0, uuid: 'u', extra: 1 }).length, 0, 'extra fields are refused')

  const target = parseTarget('https://user:pass@receiver.example/cb')
  if (!target.ok) throw new Error(target.error)
  const sent = attemptHeaders(
    { deliveryId: '693de2da-9a1e-4352-8c9d-86b564188150', requestId: 'req-1', attempt: 2, target: target.value, body: '{}', secret: 's3cret' },
    1_700_000_000_000,
    'fs-call-originator/0.1 (result-callback)',
  )
  const params = at(doc, 'components', 'pathItems', 'ResultCallback', 'post', 'parameters') as { name: string; schema: unknown }[]
  t.same(params.map((p) => p.name.toLowerCase()).sort(), Object.keys(sent).sort(), 'the documented headers are exactly those an attempt sends (signed, with user information)')
  params.forEach((p, i) => {
    const value = sent[p.name.toLowerCase()]
    t.same(check.checkAt(['components', 'pathItems', 'ResultCallback', 'post', 'parameters', String(i), 'schema'], value), [], `${p.name}: ${value}`)
  })
  t.match(signatureHeader('k', 1, '{}'), new RegExp(String(at(params.find((p) => p.name === 'X-Signature'), 'schema', 'pattern'))))
})

t.test('the reply checker the live test relies on refuses what the document does not allow', async (t) => {
  const check = documentChecker(doc)
  const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r' }
  const uuid = '0b8f3c1e-7a52-4d0e-9a7f-1c2d3e4f5a6b'
  t.same(check.checkReply('/api/call_user', 'post', 200, json, { result_code: 0, uuids: [uuid] }), [])
  t.not(check.checkReply('/api/call_user', 'post', 200, json, { result_code: 0, uuids: [] }).length, 0, 'no UUID')
  t.not(check.checkReply('/api/call_user', 'post', 200, json, { result_code: 0, uuids: ['not-a-uuid'] }).length, 0, 'not a UUID')
  t.not(check.checkReply('/api/call_user', 'post', 418, json, {}).length, 0, 'an undocumented status')
  const unauthorized = { result_code: 500, error: { id: 'unauthorized', description: 'x' } }
  t.not(check.checkReply('/api/call_user', 'post', 401, json, unauthorized).length, 0, '401 without WWW-Authenticate')
  t.same(check.checkReply('/api/call_user', 'post', 401, { ...json, 'www-authenticate': 'Basic realm="x"' }, unauthorized), [])
  t.not(check.checkReply('/api/call_user', 'post', 404, json, unauthorized).length, 0, 'an id under another status')
  t.not(check.checkReply('/api/call_user', 'post', 200, { 'content-type': 'text/html' }, '<p>').length, 0, 'another content type')
})
