/**
 * An event's `text/event-json` body read into the header map the daemon hands around, as
 * esl-lite reads it (processRawEvent in node_modules/esl-lite/esl-lite.mjs: JSON.parse of the
 * body, an object with a string Event-Name, else an invalid body). The daemon
 * reads the events itself, off esl-lite's path (src/pbx/esl-framing.ts says why).
 */
import type { FsEvent } from './types.js'

/**
 * The event's headers, or undefined when the body is not an event esl-lite would emit (not
 * JSON, not an object, no Event-Name). event-json values are strings, except a header
 * FreeSWITCH holds as an array (switch_event_serialize_json: a JSON array), which no reader
 * here expects: such values are removed in place. The parsed object is handed on as it is, not
 * copied (a copy of every header of every event was 7-12 % of the daemon's CPU, docs/bench.md).
 */
export function readEventJson(body: Buffer): FsEvent | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const data = parsed as Record<string, unknown>
  if (typeof data['Event-Name'] !== 'string') return undefined
  // switch_event_serialize_json (switch_event.c) writes every header as a string, or as an array
  // of strings when FreeSWITCH holds it as one: without a '[' anywhere in the body there is no
  // array, and the walk over every header (~140 on a channel event) can be skipped.
  return body.includes(OPEN_BRACKET) ? toFsEvent(data) : (data as FsEvent)
}

const OPEN_BRACKET = 0x5b

/** esl-lite's parsed event data as a header map of strings (non-string values removed in place). */
export function toFsEvent(data: Record<string, unknown>): FsEvent {
  for (const k in data) if (typeof data[k] !== 'string') delete data[k]
  return data as FsEvent
}
