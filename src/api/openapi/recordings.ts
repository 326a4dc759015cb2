/**
 * The recordings routes in the OpenAPI document (issue 28; api/recordings/routes.ts): the list's
 * query parameters generated from its zod schema (api/recordings/schema.ts), the record's schema
 * written here beside RecordingView (a test checks the routes' replies against it), and the
 * error replies from the catalogue.
 */
import type { ApiErrorId } from '../errors.js'
import { listQuerySchema } from '../recordings/schema.js'
import { LISTENER_ERROR_IDS, errorResponses } from './errors.js'
import { BASIC_AUTH, jsonContent, ref, type JsonObject } from './json.js'
import { queryParametersOf } from './zod-json.js'

const ONE_RECORDING: readonly ApiErrorId[] = ['unauthorized', 'recording_not_found', ...LISTENER_ERROR_IDS]

const idParameter: JsonObject = {
  name: 'id',
  in: 'path',
  required: true,
  description: "The recording's id (a UUID the daemon made). Another domain's id answers as a missing one: recording_not_found.",
  schema: { type: 'string' },
}

export function recordingSchemas(): Record<string, JsonObject> {
  return {
    Recording: {
      type: 'object',
      required: ['id', 'request_id', 'domain', 'legs', 'started_at', 'duration_ms', 'bytes', 'format', 'status'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', format: 'uuid' },
        request_id: { type: 'string', description: 'The X-Request-Id of the request whose call this is.' },
        domain: { type: 'string' },
        legs: { type: 'array', items: { type: 'string' }, description: "UUIDs of the call's recorded legs." },
        started_at: { type: 'string', format: 'date-time' },
        duration_ms: { type: ['integer', 'null'], minimum: 0, description: 'Known once completed.' },
        bytes: { type: 'integer', minimum: 0, description: 'Size of the WAV file (0 while recording).' },
        format: { const: 'wav' },
        status: { enum: ['recording', 'completed', 'failed'] },
        reason: { type: 'string', description: 'Why it failed (a refused write, a full disk, no audio).' },
      },
    },
    RecordingList: {
      type: 'object',
      required: ['result_code', 'recordings', 'next'],
      additionalProperties: false,
      properties: {
        result_code: { const: 0 },
        recordings: { type: 'array', items: ref('schemas', 'Recording'), description: 'Newest first.' },
        next: { type: ['string', 'null'], description: 'The `after` of the next page; null on the last page.' },
      },
    },
    RecordingReply: {
      type: 'object',
      required: ['result_code', 'recording'],
      additionalProperties: false,
      properties: { result_code: { const: 0 }, recording: ref('schemas', 'Recording') },
    },
  }
}

export function recordingPaths(prefix: string): Record<string, JsonObject> {
  const headers = { 'X-Request-Id': ref('headers', 'XRequestId') }
  const wav = { 'audio/wav': { schema: { type: 'string', contentMediaType: 'audio/wav' } } }
  return {
    [`${prefix}/recordings`]: {
      get: {
        operationId: 'list_recordings',
        tags: ['recordings'],
        summary: "The domain's recordings, newest first",
        security: BASIC_AUTH,
        parameters: queryParametersOf(listQuerySchema),
        responses: {
          '200': { description: 'A page; `next` gives the following one.', headers, content: jsonContent(ref('schemas', 'RecordingList')) },
          ...errorResponses(['invalid_parameter', 'unauthorized', ...LISTENER_ERROR_IDS]),
        },
      },
    },
    [`${prefix}/recordings/{id}`]: {
      parameters: [idParameter],
      get: {
        operationId: 'get_recording',
        tags: ['recordings'],
        summary: "One recording's record",
        security: BASIC_AUTH,
        responses: { '200': { description: 'The record.', headers, content: jsonContent(ref('schemas', 'RecordingReply')) }, ...errorResponses(ONE_RECORDING) },
      },
      delete: {
        operationId: 'delete_recording',
        tags: ['recordings'],
        summary: 'Deletes a recording: its audio and its record',
        security: BASIC_AUTH,
        responses: { '200': { description: 'Deleted.', headers, content: jsonContent(ref('schemas', 'Done')) }, ...errorResponses(ONE_RECORDING) },
      },
    },
    [`${prefix}/recordings/{id}/audio`]: {
      parameters: [idParameter],
      get: {
        operationId: 'get_recording_audio',
        tags: ['recordings'],
        summary: "A completed recording's audio (WAV, one party per stereo channel)",
        description:
          'One `Range` (`bytes=a-b`, `bytes=a-`, `bytes=-n`) is answered with 206 and `Content-Range`; several ranges, or one that is not understood, with the whole file; one that starts beyond the end with 416. A recording still running or failed has no audio: recording_not_found.',
        security: BASIC_AUTH,
        parameters: [{ name: 'Range', in: 'header', required: false, description: 'One byte range.', schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The whole file.', headers: { ...headers, 'Content-Length': { schema: { type: 'integer' } }, 'Accept-Ranges': { schema: { const: 'bytes' } } }, content: wav },
          '206': {
            description: 'The range asked for.',
            headers: { ...headers, 'Content-Range': { required: true, description: '`bytes a-b/size`.', schema: { type: 'string' } }, 'Content-Length': { schema: { type: 'integer' } } },
            content: wav,
          },
          ...errorResponses([...ONE_RECORDING, 'range_not_satisfiable']),
        },
      },
    },
  }
}

/** Ids only the recordings routes answer: not among an operation's replies. */
export const RECORDING_ROUTE_ERROR_IDS: readonly ApiErrorId[] = ['recording_not_found', 'range_not_satisfiable']
