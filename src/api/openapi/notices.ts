/**
 * The notices as OpenAPI webhooks (docs/callbacks.md "Notices"): a call's status events
 * (src/callbacks/status-events.ts, docs/events.md), a finished recording POSTed to
 * recording_callback_url (src/recording/follow.ts) and a group's ticketing events
 * (src/callbacks/tickets.ts). They travel as result callbacks do, with the same headers plus
 * `X-Cod-Notice`; a ticket event is signed with its group's webhook secret.
 */
import { callbackHeaders } from './callback.js'
import { STATUS_EVENTS } from '../../origination/plan.js'
import { ref, type JsonObject } from './json.js'

const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: 'null' }] })

const noticeHeader = (kind: string): JsonObject => ({
  name: 'X-Cod-Notice',
  in: 'header',
  required: true,
  description: 'What the notice is (a result callback has no such header).',
  schema: { type: 'string', const: kind },
})

const RESPONSES: JsonObject = {
  '2XX': { description: 'Delivered; the reply body is ignored.' },
  '5XX': { description: 'Retried (as result callbacks are, for callbacks.give_up_after_ms).' },
  default: { description: 'Any other answer: a failure, not retried (a dead letter).' },
}

const endUser: JsonObject = nullable({ type: 'object', additionalProperties: { type: 'string' } })

export function noticeSchemas(): Record<string, JsonObject> {
  const group = { type: 'object', required: ['id', 'name'], additionalProperties: false, properties: { id: { type: 'string' }, name: { type: 'string' } } }
  const common = {
    request_id: { type: 'string' },
    domain: { type: 'string' },
    operation: { enum: ['call_user', 'call_group', 'call_external', 'initiate_call'] },
    group,
    end_user: endUser,
    timestamp: { type: 'integer', description: 'Epoch milliseconds.' },
  }
  const commonRequired = ['event', 'request_id', 'domain', 'operation', 'group', 'end_user', 'timestamp']
  const party = {
    type: 'object',
    required: ['user_id', 'number'],
    additionalProperties: false,
    properties: { user_id: nullable({ type: 'string' }), number: nullable({ type: 'string' }) },
  }
  const statusCommon = {
    request_id: { type: 'string' },
    uuid: { type: 'string', format: 'uuid' },
    leg: { enum: ['origin', 'destination'] },
    sequence: { type: 'integer', minimum: 1, description: "Per request, from 1, without gaps; delivered in this order." },
    timestamp: { type: 'integer', description: 'Epoch milliseconds, by FreeSWITCH\'s clock.' },
    party,
    end_user: endUser,
  }
  const statusRequired = ['event', 'request_id', 'uuid', 'leg', 'sequence', 'timestamp', 'party', 'end_user']
  return {
    StatusEvent: {
      oneOf: [
        {
          type: 'object',
          required: statusRequired,
          additionalProperties: false,
          properties: { event: { enum: STATUS_EVENTS.filter((e) => e !== 'completed' && e !== 'bridged') }, ...statusCommon },
        },
        {
          type: 'object',
          required: [...statusRequired, 'peer_uuid'],
          additionalProperties: false,
          properties: { event: { const: 'bridged' }, ...statusCommon, peer_uuid: { type: 'string', format: 'uuid' } },
        },
        {
          type: 'object',
          required: [...statusRequired, 'duration_s', 'billsec', 'hangup_cause', 'hangup_by', 'answered_uuid'],
          additionalProperties: false,
          properties: {
            event: { const: 'completed' },
            ...statusCommon,
            duration_s: { type: 'integer', minimum: 0, description: 'From the leg\'s offer to its hangup, whole seconds (as FreeSWITCH\'s duration).' },
            billsec: { type: 'integer', minimum: 0, description: 'From its answer to its hangup, whole seconds (as FreeSWITCH\'s billsec); 0 unanswered.' },
            hangup_cause: { type: 'string' },
            hangup_by: { enum: ['origin', 'destination', 'api', 'system'] },
            answered_uuid: nullable({ type: 'string', format: 'uuid' }),
          },
        },
        {
          type: 'object',
          description: 'A leg that ended while the daemon was not running (taken up after a restart): it is gone, and nothing else of its end is known (FreeSWITCH\'s CDR has it).',
          required: [...statusRequired, 'duration_s', 'billsec', 'hangup_cause', 'hangup_by', 'answered_uuid', 'ended_unobserved'],
          additionalProperties: false,
          properties: {
            event: { const: 'completed' },
            ...statusCommon,
            duration_s: { type: 'null' },
            billsec: { type: 'null' },
            hangup_cause: { type: 'null' },
            hangup_by: { type: 'null' },
            answered_uuid: nullable({ type: 'string', format: 'uuid' }),
            ended_unobserved: { const: true },
          },
        },
      ],
    },
    RecordingNotice: {
      type: 'object',
      required: ['event', 'recording'],
      additionalProperties: false,
      properties: {
        event: { enum: ['recording.completed', 'recording.failed'] },
        recording: {
          type: 'object',
          required: ['id', 'request_id', 'domain', 'legs', 'started_at', 'duration_ms', 'bytes', 'format', 'status'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', format: 'uuid' },
            request_id: { type: 'string' },
            domain: { type: 'string' },
            legs: { type: 'array', items: { type: 'string' } },
            started_at: { type: 'string', format: 'date-time' },
            duration_ms: nullable({ type: 'integer', minimum: 0 }),
            bytes: { type: 'integer', minimum: 0 },
            format: { const: 'wav' },
            status: { enum: ['completed', 'failed'] },
            reason: { type: 'string', description: 'Why it failed.' },
          },
        },
      },
    },
    TicketEvent: {
      oneOf: [
        {
          type: 'object',
          required: [...commonRequired, 'uuids'],
          additionalProperties: false,
          properties: { event: { const: 'call.started' }, ...common, uuids: { type: 'array', items: { type: 'string', format: 'uuid' } } },
        },
        {
          type: 'object',
          required: [...commonRequired, 'answered'],
          additionalProperties: false,
          properties: {
            event: { const: 'call.answered' },
            ...common,
            answered: {
              type: 'object',
              required: ['uuid', 'user_id', 'number', 'at'],
              additionalProperties: false,
              properties: { uuid: { type: 'string', format: 'uuid' }, user_id: nullable({ type: 'string' }), number: nullable({ type: 'string' }), at: { type: 'integer' } },
            },
          },
        },
        {
          type: 'object',
          required: [...commonRequired, 'answered_uuid', 'duration_s', 'billsec', 'hangup_cause', 'recording_id'],
          additionalProperties: false,
          properties: {
            event: { const: 'call.ended' },
            ...common,
            answered_uuid: nullable({ type: 'string', format: 'uuid' }),
            duration_s: { type: 'integer', minimum: 0, description: 'From the answered leg\'s offer to its hangup (0 when nobody answered).' },
            billsec: { type: 'integer', minimum: 0, description: 'From the answer to the hangup.' },
            hangup_cause: { type: 'string' },
            recording_id: nullable({ type: 'string', format: 'uuid' }),
          },
        },
      ],
    },
  }
}

export function noticePathItems(): Record<string, JsonObject> {
  return {
    StatusEvent: {
      post: {
        operationId: 'status_event',
        summary: "One status event of a call's leg, POSTed to status_callback_url (docs/events.md)",
        parameters: [...callbackHeaders(), noticeHeader('status')],
        requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'StatusEvent') } } },
        responses: RESPONSES,
      },
    },
    RecordingNotice: {
      post: {
        operationId: 'recording_notice',
        summary: "A finished recording's record, POSTed to recording_callback_url (else the domain's recording.callback_url)",
        parameters: [...callbackHeaders(), noticeHeader('recording')],
        requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'RecordingNotice') } } },
        responses: RESPONSES,
      },
    },
    TicketEvent: {
      post: {
        operationId: 'ticket_event',
        summary: "A call made for a group, told to the group's ticket_webhook: call.started, call.answered, call.ended, once each and in order",
        description: 'X-Signature is made with the webhook\'s own secret (groups[].ticket_webhook.secret), not the domain\'s callback_secret.',
        parameters: [...callbackHeaders(), noticeHeader('ticket')],
        requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'TicketEvent') } } },
        responses: RESPONSES,
      },
    },
  }
}
