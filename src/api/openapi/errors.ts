/**
 * The error replies of the OpenAPI document, generated from the error catalogue
 * (api/errors.ts ERROR_STATUS): one response per HTTP status, whose `error.id` is the enum of
 * the catalogue's ids with that status, so a new id or a changed status shows up here without
 * anyone copying it. WHEN is the one hand-written part (what each id means, as in the README's
 * error table); being a total record over ApiErrorId, a new id without its line does not compile.
 */
import { ERROR_STATUS, type ApiErrorId } from '../errors.js'
import { ref, type JsonObject } from './json.js'

const WHEN: Readonly<Record<ApiErrorId, string>> = {
  unauthorized: 'credentials missing or wrong (`WWW-Authenticate: Basic`)',
  missing_parameter: 'a required parameter is absent',
  invalid_parameter:
    "wrong type, shape or value; unknown parameter; malformed JSON; a bad Idempotency-Key; or, with a body that matches its schema, a calling_number or ani the domain may not present, a callback_url host outside callbacks.allow, end_user details on a number the domain claims",
  ambiguous_user: 'user identifiers name different records, or a label several users share',
  ambiguous_group: 'group identifiers name different records, or a label several groups share',
  invalid_xml: 'an inline IVR document that is not base64, not UTF-8 or not a valid IVR document',
  destination_not_allowed: '`xml_url:` outside call_external; a PSTN destination in call_external',
  privilege_required: '`xml_url:` without the domain privilege ON_THE_FLY_IVR_ALLOWED',
  recording_not_allowed: '`record: true` where the recording mode that applies is never, or `record: false` where it is always; nothing is originated (the live calls record command: `start` where it is never, `stop` where it is always)',
  not_found: 'no endpoint at that path',
  user_not_found: 'the user names nothing in the domain',
  group_not_found: 'the group names nothing in the domain',
  destination_not_found: 'the destination names nothing in the domain',
  recording_not_found: 'no recording of the domain has this id (another domain\'s recording answers the same)',
  channel_not_found: "no live channel of the domain has this UUID (another domain's channel answers the same; nothing reaches FreeSWITCH)",
  method_not_allowed: 'known path, other method (`Allow` lists the methods)',
  user_not_registered: 'the user has no registered terminal; nothing is originated',
  no_member_available: 'no member of the group has a registered terminal; nothing is originated',
  idempotency_key_reused: 'the Idempotency-Key was used within 24 h for another request; nothing is originated',
  recording_conflict: 'the live calls record command: `start` on a leg already being recorded (the description names the recording id), `stop` on a leg not being recorded',
  payload_too_large: 'the body is over `http.body_limit`',
  unsupported_media_type: 'the body is not `Content-Type: application/json`',
  range_not_satisfiable: 'the `Range` starts beyond the end of the audio (`Content-Range: bytes */<size>`)',
  channel_limit_reached: "the channels the request may create would exceed the domain's channel_limit; nothing is originated",
  too_many_requests: 'this client address failed authentication too often; refused on every route until `Retry-After`',
  internal_error: 'unexpected; logged with the X-Request-Id of the reply',
  command_failed: 'FreeSWITCH refused the command on the live channel (its answer is in the description)',
  pbx_unavailable: 'FreeSWITCH is not connected, not answering, or shutting down; nothing was sent to it',
  cluster_unavailable: "a node of a cluster cannot reach its Redis (or it came up empty less than a lease ago), so the shared channel_limit cannot be checked; nothing is originated (docs/cluster.md)",
}

/** Every id of the catalogue, in its order. */
export const ALL_ERROR_IDS = Object.keys(ERROR_STATUS) as ApiErrorId[]

/** Ids any route of the API listener may answer (the throttle, a wrong method, a bug). */
export const LISTENER_ERROR_IDS: readonly ApiErrorId[] = ['method_not_allowed', 'too_many_requests', 'internal_error']

/** The error reply body, `{result_code: 500, error: {id, description}}`, with `id` one of `ids`. */
function errorReplySchema(ids: readonly ApiErrorId[]): JsonObject {
  return {
    type: 'object',
    required: ['result_code', 'error'],
    additionalProperties: false,
    properties: {
      result_code: { const: 500 },
      error: {
        type: 'object',
        required: ['id', 'description'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', enum: [...ids] },
          description: { type: 'string', description: 'Names the parameter and the rule broken, for the developer reading the reply.' },
        },
      },
    },
  }
}

/** The catalogue's id → status table, for clients that map ids themselves. */
export function errorCatalogueSchema(): JsonObject {
  return {
    type: 'string',
    enum: ALL_ERROR_IDS,
    description: 'Every error id of the API. The HTTP status of each is in `x-http-status`.',
    'x-http-status': { ...ERROR_STATUS },
  }
}

/** Headers some error statuses carry (besides X-Request-Id on every reply). */
function headersOf(status: number, ids: readonly ApiErrorId[]): JsonObject {
  const headers: JsonObject = { 'X-Request-Id': ref('headers', 'XRequestId') }
  if (status === 401) headers['WWW-Authenticate'] = { description: 'Always `Basic realm="..."`.', required: true, schema: { type: 'string' } }
  if (status === 405) headers['Allow'] = { description: 'The methods the path answers.', required: true, schema: { type: 'string' } }
  if (ids.includes('range_not_satisfiable')) {
    headers['Content-Range'] = { description: 'With `range_not_satisfiable` only: `bytes */<size>`.', schema: { type: 'string' } }
  }
  if (ids.includes('too_many_requests')) {
    headers['Retry-After'] = {
      description: 'With `too_many_requests` only: seconds until the client address may try again.',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    }
  }
  return headers
}

/** The responses object entries for these error ids: one per status, the ids of each listed. */
export function errorResponses(ids: readonly ApiErrorId[]): Record<string, JsonObject> {
  const byStatus = new Map<number, ApiErrorId[]>()
  for (const id of ALL_ERROR_IDS) {
    if (!ids.includes(id)) continue
    const status = ERROR_STATUS[id]
    byStatus.set(status, [...(byStatus.get(status) ?? []), id])
  }
  const responses: Record<string, JsonObject> = {}
  for (const [status, statusIds] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: statusIds.map((id) => `\`${id}\`: ${WHEN[id]}`).join('; '),
      headers: headersOf(status, statusIds),
      content: { 'application/json': { schema: errorReplySchema(statusIds) } },
    }
  }
  return responses
}
