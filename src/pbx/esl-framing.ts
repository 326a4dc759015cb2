/**
 * The Event Socket's framing, read byte by byte: where each message ends, and what it is.
 *
 * A message is headers, a blank line, then exactly Content-Length bytes of body
 * (mod_event_socket.c), and TCP cuts the stream anywhere: between two messages, inside a body,
 * or between the two newlines of a blank line. So the reader (esl-reader.ts) holds bytes until
 * they complete a message, and only then hands it on. The last cut is why esl-lite's own parser
 * is not used (esl-lite 3.2.0's FreeSwitchParser looks for the blank line in each chunk on its
 * own: when TCP splits it, the message is lost, and the next one is read with the first one's
 * length; under load this lost a CHANNEL_DESTROY in one run of the scale benchmark, 10,000
 * calls hung up at once). test/pbx/esl-framing.test.ts shows that loss in esl-lite's parser, and
 * that these frames never cause it; docs/esl-lite.md is the note for esl-lite.
 *
 * The headers are read as esl-lite reads them (parseHeaders and Headers.set), so that a message
 * means what it always meant to the daemon: the same Content-Length, the same Content-Type.
 */

const LF = 0x0a
/** "Content-Length: " as bytes. */
const CONTENT_LENGTH = Buffer.from('Content-Length: ', 'latin1')
/** "Content-Type: " as bytes. */
const CONTENT_TYPE = Buffer.from('Content-Type: ', 'latin1')
const DIGIT_0 = 0x30
const COLON = 0x3a
const SPACE = 0x20

/** What a message is, by its Content-Type as esl-lite reads the header: one the daemon reads, or any other. */
export type FrameType = 'event-json' | 'command-reply' | 'api-response' | 'auth-request' | 'disconnect-notice' | 'other'

/** The Content-Types the daemon reads, as bytes, the most frequent first. */
const TYPES: readonly (readonly [Buffer, FrameType])[] = [
  [Buffer.from('text/event-json', 'latin1'), 'event-json'],
  [Buffer.from('command/reply', 'latin1'), 'command-reply'],
  [Buffer.from('api/response', 'latin1'), 'api-response'],
  [Buffer.from('auth/request', 'latin1'), 'auth-request'],
  [Buffer.from('text/disconnect-notice', 'latin1'), 'disconnect-notice'],
]

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
 * @internal Exported for tests: test/pbx checks the framing on split input.
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
  for (const [value, type] of TYPES) if (valueIs(buf, valueStart, to, value)) return type
  return 'other'
}

/** buf[valueStart, to) is `value`, up to the line's end or a further ": ". */
function valueIs(buf: Buffer, valueStart: number, to: number, value: Buffer): boolean {
  const valueEnd = valueStart + value.length
  if (valueEnd > to) return false
  for (let k = 0; k < value.length; k++) if (buf[valueStart + k] !== value[k]) return false
  return valueEnd === to || (buf[valueEnd] === COLON && buf[valueEnd + 1] === SPACE)
}
