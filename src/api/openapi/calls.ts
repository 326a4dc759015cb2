/**
 * The live calls routes in the OpenAPI document (issue 29; api/calls/routes.ts): the list's query
 * and the commands' bodies generated from their zod schemas (api/calls/schema.ts), the call's
 * schema written here beside CallView (CTI's channel view; a test checks the routes' replies
 * against it), and the error replies from the catalogue.
 */
import { commandSchemas, listQuerySchema, recordSchema, type CallCommandName } from '../calls/schema.js'
import type { ApiErrorId } from '../errors.js'
import { LISTENER_ERROR_IDS, errorResponses } from './errors.js'
import { BASIC_AUTH, jsonContent, ref, type JsonObject } from './json.js'
import { jsonSchemaOf, queryParametersOf } from './zod-json.js'

const ONE_CALL: readonly ApiErrorId[] = ['unauthorized', 'channel_not_found', ...LISTENER_ERROR_IDS]

const uuidParameter: JsonObject = {
  name: 'uuid',
  in: 'path',
  required: true,
  description: "The leg's channel UUID. Another domain's leg, a missing one and a value that is no UUID all answer channel_not_found, and nothing reaches FreeSWITCH.",
  schema: { type: 'string' },
}

const nullable = (type: string, extra: JsonObject = {}): JsonObject => ({ type: [type, 'null'], ...extra })

export function callSchemas(): Record<string, JsonObject> {
  const commands = Object.fromEntries(
    (Object.keys(commandSchemas) as CallCommandName[]).map((name) => [`Call${name[0]?.toUpperCase() ?? ''}${name.slice(1)}Request`, jsonSchemaOf(commandSchemas[name])]),
  )
  return {
    Call: {
      type: 'object',
      description: "A live leg as CTI shows it (docs/cti.md \"Channel\"): absent values are null, so every call has the same keys.",
      required: [
        'uuid', 'direction', 'peer_location', 'calling_name', 'calling_number', 'called_number', 'offer_at', 'answer_at', 'hangup_at',
        'other_uuid', 'user_id', 'group_id', 'state', 'state_at', 'operation', 'request_id', 'end_user', 'tags', 'hangup_cause', 'recording',
      ],
      additionalProperties: false,
      properties: {
        uuid: { type: 'string', format: 'uuid' },
        direction: { enum: ['inbound', 'outbound', null] },
        peer_location: { enum: ['internal', 'external', 'unknown'], description: 'A terminal of the domain, the PSTN (a gateway), or not known.' },
        calling_name: nullable('string'),
        calling_number: nullable('string'),
        called_number: nullable('string'),
        offer_at: { type: 'integer', description: 'Epoch milliseconds.' },
        answer_at: nullable('integer', { description: 'Epoch milliseconds.' }),
        hangup_at: nullable('integer', { description: 'Epoch milliseconds.' }),
        other_uuid: nullable('string', { description: 'The leg this one is bridged (or being connected) to.' }),
        user_id: nullable('string', { description: "The id of the user whose terminal this leg is." }),
        group_id: nullable('string'),
        state: { type: 'string', description: "The channel model's state (docs/cti.md)." },
        state_at: { type: 'integer', description: 'Epoch milliseconds.' },
        operation: nullable('string', { description: 'The API operation that placed it.' }),
        request_id: nullable('string', { description: 'The X-Request-Id of the request that placed it.' }),
        end_user: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
        tags: { type: 'array', items: { type: 'string' } },
        hangup_cause: nullable('string'),
        recording: { type: 'boolean', description: 'The call of this leg is recorded once connected (docs/recording.md).' },
      },
    },
    CallList: {
      type: 'object',
      required: ['result_code', 'calls'],
      additionalProperties: false,
      properties: { result_code: { const: 0 }, calls: { type: 'array', items: ref('schemas', 'Call'), description: 'Oldest offer first.' } },
    },
    CallReply: {
      type: 'object',
      required: ['result_code', 'call'],
      additionalProperties: false,
      properties: { result_code: { const: 0 }, call: ref('schemas', 'Call') },
    },
    ...commands,
    CallRecordRequest: jsonSchemaOf(recordSchema),
    CallRecordReply: {
      type: 'object',
      required: ['result_code'],
      additionalProperties: false,
      properties: {
        result_code: { const: 0 },
        recording: { ...ref('schemas', 'Recording'), description: 'On start: the new recording (status recording); absent on stop (its notice and GET .../recordings/{id} tell the end).' },
      },
    },
  }
}

/** What each command may answer besides ONE_CALL. */
const COMMAND_ERRORS: Readonly<Record<CallCommandName, readonly ApiErrorId[]>> = {
  hangup: [],
  transfer: ['missing_parameter', 'destination_not_found', 'destination_not_allowed'],
  dtmf: ['missing_parameter'],
  hold: [],
  unhold: [],
}

export function callPaths(prefix: string): Record<string, JsonObject> {
  const headers = { 'X-Request-Id': ref('headers', 'XRequestId') }
  const paths: Record<string, JsonObject> = {
    [`${prefix}/calls`]: {
      get: {
        operationId: 'list_calls',
        tags: ['live calls'],
        summary: "The domain's live legs",
        security: BASIC_AUTH,
        parameters: queryParametersOf(listQuerySchema),
        responses: {
          '200': { description: 'The live legs.', headers, content: jsonContent(ref('schemas', 'CallList')) },
          ...errorResponses(['invalid_parameter', 'unauthorized', 'user_not_found', ...LISTENER_ERROR_IDS]),
        },
      },
    },
    [`${prefix}/calls/{uuid}`]: {
      parameters: [uuidParameter],
      get: {
        operationId: 'get_call',
        tags: ['live calls'],
        summary: 'One live leg',
        security: BASIC_AUTH,
        responses: { '200': { description: 'The leg.', headers, content: jsonContent(ref('schemas', 'CallReply')) }, ...errorResponses(ONE_CALL) },
      },
    },
  }
  for (const name of Object.keys(commandSchemas) as CallCommandName[]) {
    const schema = commandSchemas[name]
    paths[`${prefix}/calls/{uuid}/${name}`] = {
      parameters: [uuidParameter],
      post: {
        operationId: `${name}_call`,
        tags: ['live calls'],
        summary: schema.description ?? name,
        security: BASIC_AUTH,
        requestBody: {
          required: false,
          description: 'A JSON object; may be left out when it would be empty.',
          content: jsonContent(ref('schemas', `Call${name[0]?.toUpperCase() ?? ''}${name.slice(1)}Request`)),
        },
        responses: {
          '200': { description: 'FreeSWITCH accepted the command.', headers, content: jsonContent(ref('schemas', 'Done')) },
          ...errorResponses([
            ...ONE_CALL,
            'invalid_parameter',
            ...COMMAND_ERRORS[name],
            'payload_too_large',
            'unsupported_media_type',
            'command_failed',
            'pbx_unavailable',
          ]),
        },
      },
    }
  }
  paths[`${prefix}/calls/{uuid}/record`] = {
    parameters: [uuidParameter],
    post: {
      operationId: 'record_call',
      tags: ['live calls'],
      summary: recordSchema.description ?? 'record',
      security: BASIC_AUTH,
      requestBody: { required: true, content: jsonContent(ref('schemas', 'CallRecordRequest')) },
      responses: {
        '200': { description: 'FreeSWITCH started (the new recording) or stopped the recording.', headers, content: jsonContent(ref('schemas', 'CallRecordReply')) },
        ...errorResponses([
          ...ONE_CALL,
          'missing_parameter',
          'invalid_parameter',
          'recording_not_allowed',
          'recording_conflict',
          'payload_too_large',
          'unsupported_media_type',
          'internal_error',
          'command_failed',
          'pbx_unavailable',
        ]),
      },
    },
  }
  return paths
}

/** Ids only the live calls routes answer: not among an operation's replies. */
export const CALL_ROUTE_ERROR_IDS: readonly ApiErrorId[] = ['channel_not_found', 'command_failed', 'recording_conflict']
