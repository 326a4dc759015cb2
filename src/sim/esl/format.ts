/**
 * The bytes mod_event_socket writes (mod_event_socket.c v1.10.12; sessions 01, 04, 06, 08, 22 in
 * test/fixtures/freeswitch/esl/). Content-Length always counts bytes, never characters.
 */
import type { SimEvent } from '../model/events.js'
import { urlEncode } from '../text/fs-strings.js'

/** The event formats `event` accepts. */
export type EventFormat = 'plain' | 'json' | 'xml'

export const AUTH_REQUEST = 'Content-Type: auth/request\n\n'

/** The 67-byte notice sent before the server closes the socket (after exit or a wrong password). */
const DISCONNECT_TEXT = 'Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n'
export const DISCONNECT_NOTICE = `Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(DISCONNECT_TEXT)}\n\n${DISCONNECT_TEXT}`

/** The 31-byte notice of a shutting-down switch, before it closes every socket (esl/26-fsctl-shutdown.txt). */
const SHUTDOWN_TEXT = 'The system is being shut down.\n'
export const SHUTDOWN_NOTICE = `Content-Type: text/disconnect-notice\nContent-Length: ${Buffer.byteLength(SHUTDOWN_TEXT)}\n\n${SHUTDOWN_TEXT}`

/** `Content-Type: command/reply` with Reply-Text and optional extra headers (bgapi adds Job-UUID). */
export function commandReply(text: string, extra: ReadonlyArray<readonly [string, string]> = []): string {
  let out = `Content-Type: command/reply\nReply-Text: ${text}\n`
  for (const [k, v] of extra) out += `${k}: ${v}\n`
  return `${out}\n`
}

export function apiResponse(body: string): string {
  return `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`
}

/**
 * text/event-json: every header as a string (a repeated header becomes an array, as
 * switch_event_serialize_json does), then `Content-Length` and `_body` when there is a body.
 * No newline after the JSON (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt: the next
 * message starts right after the `}`).
 */
function eventJsonBody(event: SimEvent): string {
  const obj: Record<string, string | string[]> = {}
  for (const [k, v] of event.headers) {
    const prev = obj[k]
    if (prev === undefined) obj[k] = v
    else if (Array.isArray(prev)) prev.push(v)
    else obj[k] = [prev, v]
  }
  if (event.body !== undefined) {
    obj['Content-Length'] = String(Buffer.byteLength(event.body))
    obj['_body'] = event.body
  }
  return JSON.stringify(obj)
}

function eventJson(event: SimEvent): string {
  const json = eventJsonBody(event)
  return `Content-Length: ${Buffer.byteLength(json)}\nContent-Type: text/event-json\n\n${json}`
}

/**
 * text/event-plain (test/fixtures/freeswitch/esl/08-originate-user-form-event-plain.txt): `Name:
 * url-encoded value` lines, then either a blank line or `Content-Length: N`, a blank line and the
 * raw body.
 */
function eventPlainBody(event: SimEvent): string {
  let out = ''
  for (const [k, v] of event.headers) out += `${k}: ${urlEncode(v)}\n`
  if (event.body !== undefined) out += `Content-Length: ${Buffer.byteLength(event.body)}\n\n${event.body}`
  else out += '\n'
  return out
}

function eventPlain(event: SimEvent): string {
  const body = eventPlainBody(event)
  return `Content-Length: ${Buffer.byteLength(body)}\nContent-Type: text/event-plain\n\n${body}`
}

const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** text/event-xml (switch_event_xmlize): `<event><headers><Name>value</Name>...</headers><body>`. */
function eventXml(ev: SimEvent): string {
  let xml = '<event>\n  <headers>\n'
  for (const [k, v] of ev.headers) xml += `    <${k}>${xmlEscape(v)}</${k}>\n`
  if (ev.body !== undefined) xml += `    <Content-Length>${Buffer.byteLength(ev.body)}</Content-Length>\n  </headers>\n  <body>${xmlEscape(ev.body)}</body>\n`
  else xml += '  </headers>\n'
  xml += '</event>\n'
  return `Content-Length: ${Buffer.byteLength(xml)}\nContent-Type: text/event-xml\n\n${xml}`
}

/** Each event is serialised once per format, however many connections receive it. */
const serialised = new WeakMap<SimEvent, Map<string, string>>()
export function formatted(ev: SimEvent, format: EventFormat): string {
  let byFormat = serialised.get(ev)
  if (byFormat === undefined) serialised.set(ev, (byFormat = new Map()))
  let text = byFormat.get(format)
  if (text === undefined) {
    text = format === 'json' ? eventJson(ev) : format === 'plain' ? eventPlain(ev) : eventXml(ev)
    byFormat.set(format, text)
  }
  return text
}
