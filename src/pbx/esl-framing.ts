/**
 * Hands esl-lite whole Event Socket messages, never a piece of one.
 *
 * esl-lite 3.2.0's parser (FreeSwitchParser in node_modules/esl-lite/esl-lite.mjs) looks for the
 * blank line that ends a message's headers ("\n\n") in each TCP chunk on its own. When TCP splits
 * a message between those two newlines, the first chunk ends with "\n" and the next begins with
 * "\n": the parser never sees the pair, takes the message's body and the next message's headers
 * for headers, and loses the message (and reads the next one with the first one's length). Under
 * load this lost a CHANNEL_DESTROY in one run of the scale benchmark (10,000 calls hung up at
 * once); it can as well lose a CHANNEL_HANGUP or a BACKGROUND_JOB, i.e. a channel that never ends
 * for the channel limit, or an originate whose outcome never comes. test/pbx/esl-framing.test.ts
 * shows the loss in esl-lite's parser and that these chunks never cause it.
 *
 * So the socket esl-lite reads is re-chunked (esl-reader.ts, with the framing here): bytes are
 * held until they complete a message (headers up to the blank line, then Content-Length bytes of
 * body), and every chunk handed on ends where a message ends. This framing is the Event Socket's
 * (mod_event_socket.c writes headers, a blank line, then exactly Content-Length bytes), so
 * nothing is reordered or changed.
 *
 * It also hands esl-lite the reply of the daemon's own `api` commands (connection.ts `api`) in a
 * form it reads: esl-lite 3.2.0 never sends `api` itself, so it takes an `api/response` for
 * unexpected (FreeSwitchUnexpectedApiResponse: counted, dropped) and its command would wait for
 * a reply forever. Such a message is handed on as the `command/reply` esl-lite waits for, its
 * body (the command's output, mod_event_socket.c api_exec) untouched: esl-lite resolves the
 * command with it. Nothing else sends `api` on this socket, so every `api/response` is ours.
 *
 * The same pass also takes the events off esl-lite's path (issue 15, docs/bench.md): a message
 * whose Content-Type is `text/event-json` is offered to the caller's `takeEvent` (EventTaker), in
 * its place in the stream, and esl-lite never sees it unless refused. esl-lite's own handling of
 * an event is a header parse (a string split per message), a `Body`, three async generators and
 * two emits: in the api benchmark's profile esl-lite was 21 % of the daemon's busy time, 12.5 %
 * of it the JSON parse the daemon still needs, the rest that handling. The daemon matches its
 * own jobs and executes (src/pbx/connection.ts), so esl-lite has nothing to do with events but
 * subscribe to them.
 */

const LF = 0x0a
/** "Content-Length: " as bytes. */
const CONTENT_LENGTH = Buffer.from('Content-Length: ', 'latin1')
/** "Content-Type: " and the two types handled here, as bytes. */
const CONTENT_TYPE = Buffer.from('Content-Type: ', 'latin1')
const EVENT_JSON = Buffer.from('text/event-json', 'latin1')
const API_RESPONSE = Buffer.from('api/response', 'latin1')
const DIGIT_0 = 0x30
const COLON = 0x3a
const SPACE = 0x20

/** What a message is, by its Content-Type as esl-lite reads the header: the two handled here, or any other. */
export type FrameType = 'event-json' | 'api-response' | 'other'

/** One whole message found in a buffer: where its body starts and where it ends. */
export interface Frame {
  readonly bodyStart: number
  readonly end: number
  readonly type: FrameType
}

/**
 * The message starting at `start` in `buf`: a whole Frame, or how long it will be once whole
 * (`need`, counted from `start`; 0 while its headers are not complete yet, so that nobody
 * scans before it can be whole).
 *
 * Read as esl-lite reads it (parseHeaders and Headers.set): the headers end at the first "\n\n";
 * a `Content-Length` line counts when its value is digits only (up to the line's end or a
 * further ": "), a `Content-Type` line's value runs to the line's end or a further ": ", the
 * last such line wins, and a message without a length has no body. A byte loop rather than
 * Buffer.indexOf: event headers are two short lines, and each native call costs more than
 * reading them (this runs for every message the daemon receives).
 */
export function frameAt(buf: Buffer, start: number): Frame | { readonly need: number } {
  const n = buf.length
  let bodyLength = 0
  let type: FrameType = 'other'
  let lineStart = start
  let previousWasLf = false
  for (let i = start; i < n; i++) {
    if (buf[i] !== LF) {
      previousWasLf = false
      continue
    }
    if (previousWasLf) {
      const bodyStart = i + 1
      const end = bodyStart + bodyLength
      return end <= n ? { bodyStart, end, type } : { need: end - start }
    }
    const length = contentLengthOfLine(buf, lineStart, i)
    if (length >= 0) bodyLength = length
    else type = contentTypeOfLine(buf, lineStart, i) ?? type
    lineStart = i + 1
    previousWasLf = true
  }
  return { need: 0 }
}

/**
 * What `buf` holds: `complete`, the length of the whole messages at its start (0 when not even
 * one is), and `need`, the length the first incomplete message will have once whole (0 while its
 * headers are not complete yet).
 */
export function scanMessages(buf: Buffer): { readonly complete: number; readonly need: number } {
  let end = 0
  for (;;) {
    const frame = frameAt(buf, end)
    if (!('end' in frame)) return { complete: end, need: frame.need }
    end = frame.end
  }
}

/** The value of a `Content-Length: <digits>` line in buf[from, to), else -1. */
function contentLengthOfLine(buf: Buffer, from: number, to: number): number {
  const valueStart = from + CONTENT_LENGTH.length
  if (to <= valueStart) return -1
  for (let k = 0; k < CONTENT_LENGTH.length; k++) if (buf[from + k] !== CONTENT_LENGTH[k]) return -1
  let value = 0
  let i = valueStart
  for (; i < to; i++) {
    const d = (buf[i] ?? 0) - DIGIT_0
    if (d < 0 || d > 9) break
    value = value * 10 + d
  }
  // esl-lite splits a line at its first ": " after the name: digits must run to the line's end or to a ": ".
  const digitsEndLine = i === to || (buf[i] === COLON && buf[i + 1] === SPACE)
  return i > valueStart && digitsEndLine ? value : -1
}

/**
 * For a `Content-Type: ` line in buf[from, to): the type its value names (the value runs to the
 * line's end or to a further ": ", as esl-lite splits it); undefined for any other line.
 */
function contentTypeOfLine(buf: Buffer, from: number, to: number): FrameType | undefined {
  const valueStart = from + CONTENT_TYPE.length
  if (to < valueStart) return undefined
  for (let k = 0; k < CONTENT_TYPE.length; k++) if (buf[from + k] !== CONTENT_TYPE[k]) return undefined
  if (valueIs(buf, valueStart, to, EVENT_JSON)) return 'event-json'
  if (valueIs(buf, valueStart, to, API_RESPONSE)) return 'api-response'
  return 'other'
}

/** buf[valueStart, to) is `value`, up to the line's end or a further ": ". */
function valueIs(buf: Buffer, valueStart: number, to: number, value: Buffer): boolean {
  const valueEnd = valueStart + value.length
  if (valueEnd > to) return false
  for (let k = 0; k < value.length; k++) if (buf[valueStart + k] !== value[k]) return false
  return valueEnd === to || (buf[valueEnd] === COLON && buf[valueEnd + 1] === SPACE)
}

/**
 * An `api/response` as the `command/reply` esl-lite waits for: the same body, nothing else. No
 * Content-Length for an empty body (FreeSWITCH never sends one: api_exec prints `-ERR no reply`
 * instead): esl-lite 3.2.0's parser yields nothing for a message with `Content-Length: 0`.
 */
export function asCommandReply(body: Buffer): Buffer {
  if (body.length === 0) return Buffer.from('Content-Type: command/reply\n\n', 'latin1')
  return Buffer.concat([Buffer.from(`Content-Type: command/reply\nContent-Length: ${body.length}\n\n`, 'latin1'), body])
}

/**
 * Takes an event's JSON body (the bytes after its headers) instead of esl-lite: true when taken,
 * false to leave it to esl-lite (which then reads it as before, errors and all).
 */
export type EventTaker = (body: Buffer) => boolean
