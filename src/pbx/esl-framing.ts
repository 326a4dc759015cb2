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
const BLANK_LINE = '\n\n'
const CONTENT_LENGTH = 'Content-Length: '

/**
 * What `buf` holds: `complete`, the length of the whole messages at its start (0 when not even
 * one is), and `need`, the length the first incomplete message will have once whole (0 while its
 * headers are not complete yet, so that nobody scans before it can be whole). Malformed framing
 * (a Content-Length that is not a number) passes as a message without a body, as esl-lite reads it.
 */
export function scanMessages(buf: Buffer): { readonly complete: number; readonly need: number } {
  let end = 0
  for (;;) {
    const headerEnd = buf.indexOf(BLANK_LINE, end, 'latin1')
    if (headerEnd < 0) return { complete: end, need: 0 }
    const bodyStart = headerEnd + 2
    const bodyLength = contentLength(buf, end, headerEnd)
    if (buf.length < bodyStart + bodyLength) return { complete: end, need: bodyStart + bodyLength - end }
    end = bodyStart + bodyLength
  }
}

/** The Content-Length of the headers in buf[from, to), 0 when there is none. */
function contentLength(buf: Buffer, from: number, to: number): number {
  let at = from
  while (at < to) {
    const lineEnd = buf.indexOf(LF, at)
    const stop = lineEnd < 0 || lineEnd > to ? to : lineEnd
    if (stop - at > CONTENT_LENGTH.length && buf.toString('latin1', at, at + CONTENT_LENGTH.length) === CONTENT_LENGTH) {
      const n = Number.parseInt(buf.toString('latin1', at + CONTENT_LENGTH.length, stop), 10)
      return Number.isFinite(n) && n > 0 ? n : 0
    }
    at = stop + 1
  }
  return 0
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
