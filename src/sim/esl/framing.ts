/**
 * How mod_event_socket reads a client's commands off the socket (mod_event_socket.c
 * read_packet): leading blank lines skipped, the command line, then `Name: value` headers, a
 * blank line, and Content-Length bytes of body when given. A command may arrive in any number
 * of TCP chunks, and one chunk may hold several commands.
 */

export interface Command {
  /** The first line, verbatim (without CR/LF). */
  readonly line: string
  /** Headers by lower-case name (switch_event_get_header is case-insensitive). */
  readonly headers: ReadonlyMap<string, string>
  readonly body?: string
}

/** Collects a connection's bytes and hands out whole commands. */
export class CommandReader {
  private buf: Buffer = Buffer.alloc(0)

  /** Adds bytes received; then call next() until it returns undefined. */
  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
  }

  /** read_packet: one command from the buffer, or undefined until more bytes arrive. */
  next(): Command | undefined {
    let start = 0
    while (start < this.buf.length && (this.buf[start] === 0x0a || this.buf[start] === 0x0d)) start++
    if (start > 0) this.buf = this.buf.subarray(start)
    if (this.buf.length === 0) return undefined
    // The header block ends at two LFs with nothing but CRs between them.
    let newlines = 0
    let end = -1
    for (let i = 0; i < this.buf.length; i++) {
      const b = this.buf[i]
      if (b === 0x0a) {
        newlines++
        if (newlines === 2) {
          end = i + 1
          break
        }
      } else if (b !== 0x0d) newlines = 0
    }
    if (end < 0) return undefined
    const lines = this.buf.subarray(0, end).toString('utf8').split('\n').map((l) => l.replace(/\r/g, ''))
    const line = lines[0] ?? ''
    const headers = new Map<string, string>()
    for (const l of lines.slice(1)) {
      if (l === '') continue
      const colon = l.indexOf(':')
      if (colon < 0) continue
      headers.set(l.slice(0, colon).toLowerCase(), l.slice(colon + 1).replace(/^ +/, ''))
    }
    const len = parseInt(headers.get('content-length') ?? '0', 10)
    if (Number.isFinite(len) && len > 0) {
      if (this.buf.length < end + len) return undefined
      const body = this.buf.subarray(end, end + len).toString('utf8')
      this.buf = this.buf.subarray(end + len)
      return { line, headers, body }
    }
    this.buf = this.buf.subarray(end)
    return { line, headers }
  }
}
