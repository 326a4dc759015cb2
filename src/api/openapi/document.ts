/**
 * The OpenAPI 3.1 document of the API listener (issue 16 item 1), generated from the parts that
 * define the API, never copied from them: request bodies from the operations' zod schemas
 * (requests.ts), error replies from the error catalogue (errors.ts), the result callback from
 * the callback body's rules (callback.ts). Built once per app (router.ts) and served as bytes.
 *
 * test/openapi/ validates it with an OpenAPI 3.1 validator and checks every reply the
 * end-to-end tests see against it.
 */
import type { Operation } from '../../origination/plan.js'
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, REPLAYED_HEADER } from '../idempotency.js'
import { REQUEST_SCHEMAS } from '../operations/index.js'
import { callbackBodySchema, callbackPathItem } from './callback.js'
import { noticePathItems, noticeSchemas } from './notices.js'
import { domainRulesText } from './domain-rules.js'
import { ALL_ERROR_IDS, LISTENER_ERROR_IDS, errorCatalogueSchema, errorResponses } from './errors.js'
import { BASIC_AUTH, jsonContent, ref, type JsonObject } from './json.js'
import { recordingPaths, recordingSchemas, RECORDING_ROUTE_ERROR_IDS } from './recordings.js'
import { callPaths, callSchemas, CALL_ROUTE_ERROR_IDS } from './calls.js'
import { recentPaths, recentSchemas } from './recent.js'
import { hasCallbackUrl, requestSchemaName, requestSchemas } from './requests.js'
import type { ApiErrorId } from '../errors.js'

/**
 * The daemon's version (package.json; test/openapi/ checks they agree).
 * @internal Exported for tests: test/openapi checks it against package.json.
 */
export const API_VERSION = '0.1.0'

/** What an operation may answer: the whole catalogue but `not_found` (its path exists) and what only the recordings and live calls routes answer. */
const OPERATION_ERROR_IDS: readonly ApiErrorId[] = ALL_ERROR_IDS.filter(
  (id) => id !== 'not_found' && !RECORDING_ROUTE_ERROR_IDS.includes(id) && !CALL_ROUTE_ERROR_IDS.includes(id),
)

/** What gen_ws_ticket may answer (docs/cti.md "Tickets"). */
const TICKET_ERROR_IDS: readonly ApiErrorId[] = [
  'missing_parameter',
  'invalid_parameter',
  'ambiguous_user',
  'unauthorized',
  'user_not_found',
  'payload_too_large',
  'unsupported_media_type',
  ...LISTENER_ERROR_IDS,
]

const NO_AUTH: JsonObject[] = []


function operationPath(operation: Operation, request: JsonObject): JsonObject {
  const description = typeof request['description'] === 'string' ? request['description'] : ''
  const op: JsonObject = {
    operationId: operation,
    tags: ['calls'],
    summary: description.split('. ')[0] ?? operation,
    description: description + domainRulesText(operation),
    security: BASIC_AUTH,
    parameters: [ref('parameters', 'IdempotencyKey')],
    requestBody: { required: true, content: jsonContent(ref('schemas', requestSchemaName(operation))) },
    responses: {
      '200': {
        description:
          'FreeSWITCH accepted the originate. The outcome comes later by callback and CTI (`outcome_unknown` when nothing can tell). A repeat with the same Idempotency-Key gets the same bytes.',
        headers: {
          'X-Request-Id': ref('headers', 'XRequestId'),
          [REPLAYED_HEADER]: { description: '`true` when this is the stored reply of an earlier request with the same Idempotency-Key.', schema: { type: 'string', const: 'true' } },
        },
        content: jsonContent(ref('schemas', 'OriginateReply')),
      },
      ...errorResponses(OPERATION_ERROR_IDS),
    },
  }
  if (description.startsWith('Deprecated')) op['deprecated'] = true
  if (hasCallbackUrl(request)) op['callbacks'] = { result: { '{$request.body#/callback_url}': ref('pathItems', 'ResultCallback') } }
  return { post: op }
}

export function buildOpenApiDocument(opts: { readonly prefix: string }): JsonObject {
  const requests = requestSchemas(opts.prefix)
  const paths: JsonObject = {}
  for (const operation of Object.keys(REQUEST_SCHEMAS) as Operation[]) {
    paths[`${opts.prefix}/${operation}`] = operationPath(operation, requests[requestSchemaName(operation)] ?? {})
  }
  paths[`${opts.prefix}/gen_ws_ticket`] = {
    post: {
      operationId: 'gen_ws_ticket',
      tags: ['cti'],
      summary: 'A one-time ticket for one exact ws_cti URI, for a browser that must not hold an API token',
      description: `The browser then opens \`${opts.prefix}/ws_cti?...&ticket=<ticket>\` (WebSocket, docs/cti.md). A ticket is consumed by its first presentation and expires after cti.ticket_ttl_ms.${domainRulesText('gen_ws_ticket')}`,
      security: BASIC_AUTH,
      requestBody: { required: true, content: jsonContent(ref('schemas', requestSchemaName('gen_ws_ticket'))) },
      responses: {
        '200': { description: 'The ticket.', headers: { 'X-Request-Id': ref('headers', 'XRequestId') }, content: jsonContent(ref('schemas', 'TicketReply')) },
        ...errorResponses(TICKET_ERROR_IDS),
      },
    },
  }
  Object.assign(paths, recordingPaths(opts.prefix))
  Object.assign(paths, callPaths(opts.prefix))
  Object.assign(paths, recentPaths(opts.prefix))
  paths[`${opts.prefix}/openapi.json`] = {
    get: {
      operationId: 'openapi',
      tags: ['service'],
      summary: 'This document',
      security: NO_AUTH,
      responses: { '200': { description: 'The OpenAPI 3.1 document.', content: jsonContent({ type: 'object' }) }, ...errorResponses(LISTENER_ERROR_IDS) },
    },
  }
  paths['/healthz'] = {
    get: {
      operationId: 'healthz',
      tags: ['service'],
      summary: 'Whether FreeSWITCH is connected, for load balancers',
      security: NO_AUTH,
      responses: {
        '200': { description: 'FreeSWITCH is connected.', content: jsonContent(healthSchema('ok', 'connected')) },
        '503': { description: 'FreeSWITCH is not connected, frozen or shutting down: requests get pbx_unavailable.', content: jsonContent(healthSchema('unavailable', 'disconnected')) },
        ...errorResponses(LISTENER_ERROR_IDS),
      },
    },
  }
  paths['/metrics'] = {
    get: {
      operationId: 'metrics',
      tags: ['service'],
      summary: 'Prometheus metrics (docs/operations.md)',
      security: NO_AUTH,
      responses: {
        '200': { description: 'The Prometheus text exposition format.', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...errorResponses(LISTENER_ERROR_IDS),
      },
    },
  }

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'cod: call origination daemon for FreeSWITCH',
      version: API_VERSION,
      description:
        'Place calls through FreeSWITCH. Every error is `{"result_code": 500, "error": {"id", "description"}}`; an error reply means no call (nothing of the request reached FreeSWITCH). A `200` means the originate reached FreeSWITCH; its outcome comes by the result callback (`callback_url`) and CTI. docs/api.md has every rule.\n\n' +
        'Request schemas: a body that matches its schema is never refused for its shape (`invalid_parameter`, `missing_parameter`); it may still be refused for what only the domain can tell, listed in each operation. Two rules are not in the schemas: a string must be well-formed Unicode (a lone surrogate escape such as `\\ud800` is refused), and lengths count UTF-16 code units, so a character outside the Basic Multilingual Plane counts twice. Every `pattern` compiles in ECMA-262 (u flag), RE2 and Rust regex. Some patterns are a subset of what the daemon takes (their descriptions say what else it takes).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'calls', description: 'The four operations.' },
      { name: 'cti', description: 'WebSocket CTI tickets.' },
      { name: 'recordings', description: 'Recorded calls: records and audio (docs/recording.md).' },
      { name: 'live calls', description: "The domain's live legs and the commands on them (docs/api.md \"Live calls\")." },
      { name: 'service', description: 'Health, metrics and this document (no authentication).' },
    ],
    paths,
    webhooks: {
      resultCallback: ref('pathItems', 'ResultCallback'),
      statusEvent: ref('pathItems', 'StatusEvent'),
      recordingNotice: ref('pathItems', 'RecordingNotice'),
      ticketEvent: ref('pathItems', 'TicketEvent'),
    },
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: 'Username: the domain; password: one of its API tokens.' },
      },
      parameters: {
        IdempotencyKey: {
          name: IDEMPOTENCY_HEADER,
          in: 'header',
          required: false,
          description:
            'A client that timed out sends the same request again with the same key and gets the first reply again (same UUIDs, `Idempotent-Replayed: true`) without a second call. Per domain, kept 24 h; the same key with another operation or body is 409 idempotency_key_reused; an error reply keeps nothing.',
          schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
        },
      },
      headers: {
        XRequestId: { description: "The daemon's id of the request (its log line, the FreeSWITCH channels).", schema: { type: 'string' } },
      },
      schemas: {
        ...requests,
        OriginateReply: {
          type: 'object',
          required: ['result_code', 'uuids'],
          additionalProperties: false,
          properties: {
            result_code: { const: 0 },
            uuids: {
              type: 'array',
              minItems: 1,
              items: { type: 'string', format: 'uuid' },
              description: 'One UUID per leg that may be created, in the order legs are tried, generated by the daemon.',
            },
          },
        },
        // `{"result_code":0}`: a command done, a recording deleted (the live calls', the recordings' routes).
        Done: {
          type: 'object',
          required: ['result_code'],
          additionalProperties: false,
          properties: { result_code: { const: 0 } },
        },
        TicketReply: {
          type: 'object',
          required: ['result_code', 'ticket'],
          additionalProperties: false,
          properties: { result_code: { const: 0 }, ticket: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' } },
        },
        ...recordingSchemas(),
        ...callSchemas(),
        ...recentSchemas(),
        ErrorId: errorCatalogueSchema(),
        CallbackBody: callbackBodySchema(),
        ...noticeSchemas(),
      },
      pathItems: { ResultCallback: callbackPathItem(), ...noticePathItems() },
    },
  }
}

function healthSchema(status: string, freeswitch: string): JsonObject {
  return {
    type: 'object',
    required: ['status', 'freeswitch'],
    additionalProperties: false,
    properties: { status: { const: status }, freeswitch: { const: freeswitch } },
  }
}
