/**
 * Reads the Event Socket for the daemon and for esl-lite: the events go to the daemon at once,
 * from the socket's 'data' callback; everything else (command replies) goes to esl-lite's
 * parser, as whole messages (esl-framing.ts says why whole), through the async iterator it reads
 * the socket with (`for await` in FreeSwitchParser, node_modules/esl-lite/esl-lite.mjs).
 *
 * Why not that iterator for everything (issue 15, docs/bench.md): Node's stream iterator, and the
 * generator that re-cut its chunks, cost a promise and several microtasks for every chunk
 * FreeSWITCH sends, and most chunks hold events only. Here a chunk of events is read, cut and
 * handed to the daemon's taker in one synchronous pass.
 *
 * The order of the wire is kept: an event is taken only once esl-lite has handled every message
 * before it, i.e. once it asked for more after the chunk that held them (its parser and its client
 * loop handle every message of a chunk before they pull the next one). So a command's reply
 * still reaches esl-lite, and settles the daemon's command, before the BACKGROUND_JOB or channel
 * event that follows it on the wire reaches the daemon.
 *
 * The iterator ends as Node's does: once the socket ended and everything was handed on (a
 * trailing piece of a message last: esl-lite reports it), or with the socket's error, or with
 * ERR_STREAM_PREMATURE_CLOSE when it closed without ending (stream.finished says which).
 * esl-lite leaving its loop (`return`) destroys the socket, as Node's iterator does.
 */
import { finished, type Readable } from 'node:stream'
import { asCommandReply, frameAt, type EventTaker } from './esl-framing.js'

/** A whole event not taken yet: its JSON body, and the whole message should the taker refuse it. */
interface PendingEvent {
  readonly body: Buffer
  readonly message: Buffer
}

type Ahead = Buffer | PendingEvent

const isEvent = (a: Ahead): a is PendingEvent => !Buffer.isBuffer(a)

/**
 * The iterator esl-lite reads `source` with: every chunk it yields ends where a message ends;
 * with `takeEvent`, every whole `text/event-json` message is offered to it instead, in its place
 * in the stream (refused, it goes to esl-lite in that place).
 */
export function wholeMessages(source: Readable, takeEvent?: EventTaker): AsyncIterableIterator<Buffer> {
  return new MessageReader(source, takeEvent)
}

class MessageReader implements AsyncIterableIterator<Buffer> {
  /** Bytes of the message being received, not whole yet. */
  private parts: Buffer[] = []
  private length = 0
  /** The length the message being received will have once whole (0: its headers are not complete yet). */
  private need = 0
  /** Whole messages not handed on yet, in stream order: runs of bytes for esl-lite, events for the taker. */
  private readonly ahead: Ahead[] = []
  /** esl-lite's pending next(), when it waits for more. */
  private waiting: { resolve: (r: IteratorResult<Buffer>) => void; reject: (e: unknown) => void } | undefined
  /** esl-lite got a chunk and has not asked for more yet: the events after it must wait. */
  private eslBusy = false
  /** How the source ended: undefined while it runs, null once it ended, else its error. */
  private outcome: Error | null | undefined
  private readonly stopWatching: () => void
  private readonly onData = (chunk: Buffer) => this.receive(chunk)

  constructor(
    private readonly source: Readable,
    private readonly takeEvent: EventTaker | undefined,
  ) {
    source.on('data', this.onData)
    this.stopWatching = finished(source, { writable: false }, (e) => {
      // The socket ended inside a message: esl-lite reports what is left (FreeSwitchParserNonEmptyBufferAtEndError).
      if (this.length > 0) this.ahead.push(Buffer.concat(this.parts, this.length))
      this.parts = []
      this.length = 0
      this.outcome = e ?? null
      this.pump()
    })
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Buffer> {
    return this
  }

  /** esl-lite asks for more: it has handled everything handed to it before. */
  next(): Promise<IteratorResult<Buffer>> {
    this.eslBusy = false
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.pump()
    })
  }

  /**
   * esl-lite left its loop (a message it cannot read): the socket is destroyed with an error, as
   * Node's stream iterator does (destroyer: an AbortError when the stream had not finished). The
   * error matters: esl-lite reconnects once its socket emits 'end' or 'error', and a socket
   * destroyed without an error emits neither.
   */
  return(): Promise<IteratorResult<Buffer>> {
    const finishedAlready = this.outcome !== undefined
    this.stop()
    if (!finishedAlready) this.source.destroy(Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' }))
    return Promise.resolve({ done: true, value: undefined })
  }

  private stop(): void {
    this.source.off('data', this.onData)
    this.stopWatching()
    this.ahead.length = 0
    this.outcome ??= null
  }

  /** Cuts what arrived into whole messages (kept in `ahead`), then hands on what may go now. */
  private receive(chunk: Buffer): void {
    this.parts.push(chunk)
    this.length += chunk.length
    if (this.length < this.need) return
    const buf = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.length)
    /** Start of the bytes not queued yet. */
    let from = 0
    let at = 0
    for (;;) {
      const frame = frameAt(buf, at)
      if (!('end' in frame)) {
        this.need = frame.need
        break
      }
      if (this.takeEvent !== undefined && frame.type === 'event-json') {
        if (at > from) this.ahead.push(buf.subarray(from, at))
        const body = buf.subarray(frame.bodyStart, frame.end)
        // Nothing before it waits: taken now (nearly always), else queued behind what waits.
        if (this.ahead.length > 0 || this.eslBusy) this.ahead.push({ body, message: buf.subarray(at, frame.end) })
        else if (!this.offer(body)) this.ahead.push(buf.subarray(at, frame.end))
        // The taker threw (offer): the iterator has failed, nothing more is read.
        if (this.outcome !== undefined) return this.pump()
        from = frame.end
      } else if (frame.type === 'api-response') {
        if (at > from) this.ahead.push(buf.subarray(from, at))
        this.ahead.push(asCommandReply(buf.subarray(frame.bodyStart, frame.end)))
        from = frame.end
      }
      at = frame.end
    }
    if (at > from) this.ahead.push(buf.subarray(from, at))
    const rest = buf.subarray(at)
    this.parts = rest.length > 0 ? [rest] : []
    this.length = rest.length
    this.pump()
  }

  /**
   * Hands on, in order, what may go now: events to the taker while esl-lite has handled what came
   * before them; the next run of other messages to esl-lite when it waits for it (one chunk).
   */
  private pump(): void {
    while (this.ahead.length > 0 && !this.eslBusy) {
      const head = this.ahead[0] as Ahead
      if (isEvent(head)) {
        this.ahead.shift()
        // Refused: esl-lite reads it, in its place.
        if (!this.offer(head.body)) this.ahead.unshift(head.message)
        continue
      }
      const waiting = this.waiting
      if (waiting === undefined) return
      let end = 1
      while (end < this.ahead.length && !isEvent(this.ahead[end] as Ahead)) end++
      const run = this.ahead.splice(0, end) as Buffer[]
      this.waiting = undefined
      this.eslBusy = true
      waiting.resolve({ done: false, value: run.length === 1 ? (run[0] as Buffer) : Buffer.concat(run) })
    }
    if (this.ahead.length > 0 || this.outcome === undefined || this.waiting === undefined) return
    const waiting = this.waiting
    this.waiting = undefined
    if (this.outcome === null) waiting.resolve({ done: true, value: undefined })
    else waiting.reject(this.outcome)
  }

  /**
   * The taker's answer. Should it throw (a bug), the iterator fails with its error and the socket
   * is destroyed, as with the generator this replaced (its for-await left Node's iterator).
   */
  private offer(body: Buffer): boolean {
    try {
      return (this.takeEvent as EventTaker)(body)
    } catch (e) {
      this.stop()
      this.outcome = e instanceof Error ? e : new Error(String(e))
      this.source.destroy(this.outcome)
      return true
    }
  }
}
