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
 * So the socket esl-lite reads is re-chunked here: bytes are held until they complete a message
 * (headers up to the blank line, then Content-Length bytes of body), and every chunk handed on
 * ends where a message ends. This framing is the Event Socket's (mod_event_socket.c writes
 * headers, a blank line, then exactly Content-Length bytes), so nothing is reordered or changed.
 */

const LF = 0x0a
/** "Content-Length: " as bytes. */
const CONTENT_LENGTH = Buffer.from('Content-Length: ', 'latin1')
const DIGIT_0 = 0x30
const COLON = 0x3a
const SPACE = 0x20

/**
 * What `buf` holds: `complete`, the length of the whole messages at its start (0 when not even
 * one is), and `need`, the length the first incomplete message will have once whole (0 while its
 * headers are not complete yet, so that nobody scans before it can be whole).
 *
 * Read as esl-lite reads it (parseHeaders and Headers.set): the headers end at the first "\n\n";
 * a `Content-Length` line counts when its value is digits only (up to the line's end or a
 * further ": "), the last such line wins, and a message without one has no body. A byte loop
 * rather than Buffer.indexOf: event headers are two short lines, and each native call costs more
 * than reading them (this runs for every message the daemon receives).
 */
export function scanMessages(buf: Buffer): { readonly complete: number; readonly need: number } {
  const n = buf.length
  let end = 0
  for (;;) {
    let bodyLength = 0
    let lineStart = end
    let previousWasLf = false
    let headerEnd = -1
    for (let i = end; i < n; i++) {
      if (buf[i] !== LF) {
        previousWasLf = false
        continue
      }
      if (previousWasLf) {
        headerEnd = i - 1
        break
      }
      const length = contentLengthOfLine(buf, lineStart, i)
      if (length >= 0) bodyLength = length
      lineStart = i + 1
      previousWasLf = true
    }
    if (headerEnd < 0) return { complete: end, need: 0 }
    const bodyStart = headerEnd + 2
    if (n < bodyStart + bodyLength) return { complete: end, need: bodyStart + bodyLength - end }
    end = bodyStart + bodyLength
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
 * `chunks` re-cut so that every chunk yielded ends where a message ends (a trailing piece is
 * yielded last, when the socket ends). A long body is gathered as a list and joined once, when
 * it is whole.
 */
export async function* wholeMessages(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let parts: Buffer[] = []
  let length = 0
  let need = 0
  for await (const chunk of chunks) {
    parts.push(chunk)
    length += chunk.length
    if (length < need) continue
    const buf = parts.length === 1 ? chunk : Buffer.concat(parts, length)
    const scan = scanMessages(buf)
    const rest = buf.subarray(scan.complete)
    parts = rest.length > 0 ? [rest] : []
    length = rest.length
    need = scan.need
    if (scan.complete > 0) yield buf.subarray(0, scan.complete)
  }
  // The socket ended inside a message: esl-lite reports what is left (FreeSwitchParserNonEmptyBufferAtEndError).
  if (length > 0) yield Buffer.concat(parts, length)
}
