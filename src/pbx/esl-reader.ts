/**
 * The one reader of the Event Socket: it reads the socket's 'data' callback, cuts what arrives
 * into whole messages (esl-framing.ts) and hands each to the session (esl-session.ts), in the
 * order of the wire, in the same synchronous pass.
 *
 * Why the 'data' callback and one pass (issue 15, docs/bench.md): Node's stream iterator, and any
 * generator that re-cuts its chunks, cost a promise and several microtasks for every chunk
 * FreeSWITCH sends, and most chunks hold events only. Here a chunk of events is read, cut and
 * handed on without leaving the callback. The order of the wire is kept by construction: a
 * command's reply settles the command before the BACKGROUND_JOB or channel event that follows it
 * is handed on.
 *
 * A message the daemon cannot read (an event body that is no event, a Content-Type it does not
 * know) drops the socket: with the stream's framing in doubt, a fresh socket and a re-read of the
 * channels are the safe way on (esl-lite 3.2.0 did the same: its read loop breaks on such a
 * message, and it reconnects).
 */
import type { Readable } from 'node:stream'
import { frameAt } from './esl-framing.js'

/** What the reader hands on, one message at a time. */
export interface EslMessages {
  /** A `text/event-json` message's body; false when it is no event (the socket is then dropped). */
  event(body: Buffer): boolean
  /** A `command/reply` (its headers, without the blank line) or an `api/response` (no headers: its body is the output). */
  reply(headers: Buffer | undefined, body: Buffer): void
  /** `auth/request`: a new socket greets us. */
  authRequest(): void
  /** `text/disconnect-notice`: FreeSWITCH is closing this socket. */
  disconnectNotice(): void
}

export class EslReader {
  /** Bytes of the message being received, not whole yet. */
  private parts: Buffer[] = []
  private length = 0
  /** The length the message being received will have once whole (0: its headers are not complete yet). */
  private need = 0
  private stopped = false
  private readonly onData = (chunk: Buffer) => this.receive(chunk)

  constructor(
    private readonly source: Readable,
    private readonly to: EslMessages,
  ) {
    source.on('data', this.onData)
  }

  /** Reads nothing more (the socket is gone or being dropped). */
  stop(): void {
    this.stopped = true
    this.source.off('data', this.onData)
    this.parts = []
    this.length = 0
  }

  private receive(chunk: Buffer): void {
    this.parts.push(chunk)
    this.length += chunk.length
    if (this.length < this.need) return
    const buf = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.length)
    let at = 0
    for (;;) {
      const frame = frameAt(buf, at)
      if (!('end' in frame)) {
        this.need = frame.need
        break
      }
      const problem = this.hand(buf, at, frame.bodyStart, frame.end, frame.type)
      if (problem !== undefined) return this.drop(problem)
      // A handler may have dropped the socket.
      if (this.stopped) return
      at = frame.end
    }
    const rest = buf.subarray(at)
    this.parts = rest.length > 0 ? [rest] : []
    this.length = rest.length
  }

  /** Hands one whole message on; what is wrong with it, should the daemon not read it. */
  private hand(buf: Buffer, start: number, bodyStart: number, end: number, type: string): string | undefined {
    try {
      switch (type) {
        case 'event-json':
          return this.to.event(buf.subarray(bodyStart, end)) ? undefined : 'an event body that is no event'
        case 'command-reply':
          this.to.reply(buf.subarray(start, bodyStart - 2), buf.subarray(bodyStart, end))
          return undefined
        case 'api-response':
          this.to.reply(undefined, buf.subarray(bodyStart, end))
          return undefined
        case 'auth-request':
          this.to.authRequest()
          return undefined
        case 'disconnect-notice':
          this.to.disconnectNotice()
          return undefined
        default:
          return `a message of an unexpected type: ${JSON.stringify(buf.subarray(start, Math.min(bodyStart, start + 200)).toString('latin1'))}`
      }
    } catch (e) {
      // A bug in a handler: the socket is dropped with it, rather than reading on past a message half handled.
      return e instanceof Error ? e.message : String(e)
    }
  }

  private drop(problem: string): void {
    this.stop()
    this.source.destroy(new Error(`Event Socket: ${problem}`))
  }
}
