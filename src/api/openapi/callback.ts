/**
 * The result callback as an OpenAPI 3.1 webhook (docs/callbacks.md): the body the daemon POSTs
 * to `callback_url` (callbacks/body.ts: exactly the interface's notification), the headers of
 * each attempt (callbacks/attempt.ts `attemptHeaders`; test/openapi/ checks both lists agree),
 * and what the receiver's answer means. RESULT_ERRORS is total over the engine's
 * ResultErrorId, so a new result id without its line here does not compile.
 */
import type { ResultErrorId } from '../../origination/outcome.js'
import { ref, type JsonObject } from './json.js'

const RESULT_ERRORS: Readonly<Record<ResultErrorId, string>> = {
  no_answer: 'nobody answered in time (NO_ANSWER, NO_USER_RESPONSE, ALLOTTED_TIMEOUT)',
  busy: 'the party was busy (USER_BUSY)',
  rejected: 'the party refused the call (CALL_REJECTED)',
  not_registered: 'no registered terminal (USER_NOT_REGISTERED, SUBSCRIBER_ABSENT)',
  cancelled: 'the attempt was cancelled (ORIGINATOR_CANCEL, LOSE_RACE)',
  failed: 'any other hangup cause',
  outcome_unknown: 'the originate reached FreeSWITCH but nothing ever told how it ended (cause UNKNOWN); the call may or may not have rung',
}

const RESULT_ERROR_IDS = Object.keys(RESULT_ERRORS) as ResultErrorId[]

export function callbackBodySchema(): JsonObject {
  return {
    description: 'The final result of one request: exactly one per request; it may arrive more than once (same X-Delivery-Id, same bytes).',
    oneOf: [
      {
        title: 'Answered',
        type: 'object',
        required: ['result_code', 'uuid'],
        additionalProperties: false,
        properties: {
          result_code: { const: 0 },
          uuid: { type: 'string', format: 'uuid', description: "The channel that answered: one of the UUIDs of the operation's reply." },
        },
      },
      {
        title: 'NotAnswered',
        type: 'object',
        required: ['result_code', 'error'],
        additionalProperties: false,
        properties: {
          result_code: { const: 500 },
          error: {
            type: 'object',
            required: ['id', 'cause'],
            additionalProperties: false,
            properties: {
              id: { type: 'string', enum: RESULT_ERROR_IDS, description: RESULT_ERROR_IDS.map((id) => `\`${id}\`: ${RESULT_ERRORS[id]}`).join('; ') },
              cause: { type: 'string', description: 'The raw FreeSWITCH hangup cause (`NO_ANSWER`, `USER_BUSY`, ...), `UNKNOWN` with outcome_unknown.' },
            },
          },
        },
      },
    ],
  }
}

const header = (name: string, required: boolean, description: string, schema: JsonObject): JsonObject => ({
  name,
  in: 'header',
  required,
  description,
  schema,
})

/** The header parameters of every attempt (lower-case on the wire, as Node sends them); notices.ts adds its own. */
export const callbackHeaders = (): readonly JsonObject[] => CALLBACK_HEADERS

const CALLBACK_HEADERS: readonly JsonObject[] = [
  header('Content-Type', true, 'Always `application/json`.', { type: 'string', const: 'application/json' }),
  header('User-Agent', true, 'The daemon and its version.', { type: 'string' }),
  header('X-Delivery-Id', true, 'Fixed when the result is produced: the same on every attempt, also after a restart. Keep the ids processed (a day) and answer 2xx to a repeat.', {
    type: 'string',
    format: 'uuid',
  }),
  header('X-Delivery-Attempt', true, '1, 2, 3, ... (informational; goes on across restarts).', { type: 'string', pattern: '^[1-9][0-9]*$' }),
  header('X-Request-Id', true, "The daemon's id of the request (its logs, the FreeSWITCH channels); percent-encoded if not printable ASCII.", { type: 'string' }),
  header('X-Signature', false, "Only when the domain has callback_secret: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + \".\" + raw body)>`; refuse stale t (docs/callbacks.md).", {
    type: 'string',
    pattern: '^t=[0-9]{1,12},v1=[0-9a-f]{64}$',
  }),
  header('Authorization', false, 'Only when callback_url has user information: `Basic base64(user:pass)` (removed from the URL requested).', { type: 'string' }),
]

/** The path item of the callback, shared by `webhooks` and each operation's `callbacks`. */
export function callbackPathItem(): JsonObject {
  return {
    post: {
      operationId: 'result_callback',
      summary: "The request's final result, POSTed to its callback_url",
      description: 'Retried by time (exponential backoff with jitter) for `callbacks.give_up_after_ms` (24 h), then kept as a dead letter. Redirects are not followed.',
      parameters: [...CALLBACK_HEADERS],
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'CallbackBody') } } },
      responses: {
        '2XX': { description: 'Delivered; the reply body is ignored.' },
        '429': {
          description: 'Retried; a `Retry-After` (seconds or HTTP-date) is honoured, within `callbacks.backoff_max_ms`.',
          headers: { 'Retry-After': { schema: { type: 'string' } } },
        },
        '5XX': { description: 'Retried.' },
        default: { description: 'Any other answer (3xx, other 4xx): a failure, not retried (a dead letter).' },
      },
    },
  }
}
