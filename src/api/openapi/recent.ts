/**
 * The finished calls and channel samples routes in the OpenAPI document (api/calls/recent.ts,
 * docs/api.md "Finished calls and channel samples"). The schemas are written here beside the
 * view the route makes; test/api/recent-calls.test.ts checks real replies against them.
 */
import { LISTENER_ERROR_IDS, errorResponses } from './errors.js'
import { BASIC_AUTH, jsonContent, ref, type JsonObject } from './json.js'

const EPOCH_MS = { type: 'integer', description: 'Epoch milliseconds.' }

export function recentSchemas(): Record<string, JsonObject> {
  return {
    FinishedCall: {
      type: 'object',
      description: "A call of the domain that ended: its legs (those of one request, and legs bridged together), kept in the daemon's memory.",
      required: ['id', 'request_id', 'operation', 'parties', 'outcome', 'started_at', 'answered_at', 'ended_at', 'duration_s', 'talk_s', 'hangup_cause', 'legs'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', description: "The channel UUID of the call's first leg." },
        request_id: { type: ['string', 'null'], description: 'The X-Request-Id of the API request that placed it, if any.' },
        operation: { type: ['string', 'null'], description: 'The API operation that placed it, if any.' },
        parties: { type: 'array', items: { type: 'string' }, description: "Each leg's user or number, in order of offer, each once." },
        outcome: {
          enum: ['connected', 'answered', 'busy', 'no_answer', 'cancelled', 'failed'],
          description: 'connected: two legs were bridged; answered: a leg answered, none was bridged; otherwise from the cause of a call nobody answered.',
        },
        started_at: { ...EPOCH_MS, description: 'The first offer (epoch ms).' },
        answered_at: { type: ['integer', 'null'], description: 'The first answer (epoch ms), null when nobody answered.' },
        ended_at: { ...EPOCH_MS, description: 'The last hangup (epoch ms).' },
        duration_s: { type: 'integer', minimum: 0, description: 'Whole seconds from the first offer to the last hangup.' },
        talk_s: { type: 'integer', minimum: 0, description: 'Whole seconds from the first answer to the last hangup; 0 when nobody answered.' },
        hangup_cause: { type: ['string', 'null'], description: 'The FreeSWITCH cause of the hangup that ended the call (a leg that only lost a race does not decide it).' },
        legs: { type: 'integer', minimum: 1 },
      },
    },
    FinishedCallList: {
      type: 'object',
      required: ['result_code', 'calls'],
      additionalProperties: false,
      properties: { result_code: { const: 0 }, calls: { type: 'array', maxItems: 50, items: ref('schemas', 'FinishedCall'), description: 'Newest first.' } },
    },
    ChannelSampleList: {
      type: 'object',
      required: ['result_code', 'interval_ms', 'samples'],
      additionalProperties: false,
      properties: {
        result_code: { const: 0 },
        interval_ms: { type: 'integer', minimum: 1, description: 'Time between two samples (10 s).' },
        samples: {
          type: 'array',
          description: 'Oldest first, one hour at most.',
          items: {
            type: 'object',
            required: ['at', 'live', 'limit'],
            additionalProperties: false,
            properties: {
              at: EPOCH_MS,
              live: { type: 'integer', minimum: 0, description: 'Channels of the domain not hung up (what the channel limit counts).' },
              limit: { type: 'integer', minimum: 0, description: "The domain's channel_limit then." },
            },
          },
        },
      },
    },
  }
}

export function recentPaths(prefix: string): Record<string, JsonObject> {
  const headers = { 'X-Request-Id': ref('headers', 'XRequestId') }
  const errors = errorResponses(['unauthorized', ...LISTENER_ERROR_IDS])
  return {
    [`${prefix}/finished_calls`]: {
      get: {
        operationId: 'list_finished_calls',
        tags: ['live calls'],
        summary: "The domain's last 50 finished calls",
        description: 'Kept in memory since the daemon started (a restart empties the list); the live calls page shows them.',
        security: BASIC_AUTH,
        responses: { '200': { description: 'The finished calls.', headers, content: jsonContent(ref('schemas', 'FinishedCallList')) }, ...errors },
      },
    },
    [`${prefix}/channel_samples`]: {
      get: {
        operationId: 'list_channel_samples',
        tags: ['live calls'],
        summary: "The domain's live channels against its channel_limit over the last hour",
        description: 'One sample every 10 s, kept in memory since the daemon started; the live calls page draws them.',
        security: BASIC_AUTH,
        responses: { '200': { description: 'The samples.', headers, content: jsonContent(ref('schemas', 'ChannelSampleList')) }, ...errors },
      },
    },
  }
}
