/**
 * The daemon's Event Socket session with FreeSWITCH: one TCP connection to mod_event_socket,
 * reconnected after every drop; read by one reader (esl-reader.ts); written one command at a
 * time, each at most once (outgoing.ts); authenticated on every `auth/request`.
 *
 * Why not esl-lite's FreeSwitchClient (node_modules/esl-lite, docs/esl-lite.md): the daemon needs
 * what it does not offer, and it offers no way to change it without reaching into its private
 * fields. Its client owns the socket and reads it with an async iterator (a promise and several
 * microtasks per chunk, where the daemon reads events in the socket's callback: issue 15); its
 * parser loses a message whose blank line TCP splits; its queue writes a command it timed out on
 * later, and writes again, on the next socket, a command written on a socket that closed (an
 * originate placed twice); it takes an `api/response` for unexpected; and it says neither when a
 * socket closes nor how many bytes came. What is left of the Event Socket protocol once those are
 * the daemon's is this file: connect, authenticate, write in turn, hand replies back in order.
 * esl-lite's own header parse (parseHeaders, part of its public API) still reads the replies, so
 * that a Reply-Text means what it meant.
 *
 * Reconnection follows esl-lite's: at once after a socket that had authenticated closes; after a
 * failed attempt (or a socket closed before it authenticated: a wrong password, an ACL's
 * rejection) a pause of 200 ms, growing by a fifth up to 1 s while the connection is refused.
 */
import net, { type Socket } from 'node:net'
import { parseHeaders } from 'esl-lite'
import type { Logger } from '../util/logger.js'
import { EslReader } from './esl-reader.js'
import { Outgoing } from './outgoing.js'

const FIRST_RETRY_MS = 200
const MAX_RETRY_MS = 1000

/** What the session tells its owner (src/pbx/connection.ts). */
export interface EslSessionHooks {
  /** Socket `generation` is open, not authenticated yet. */
  opened(generation: number): void
  /** Socket `generation` authenticated: the owner's commands may follow (subscriptions first). */
  authenticated(generation: number): void
  /** Socket `generation` is gone: the command written on it and unanswered is unconfirmed already. */
  closed(generation: number): void
  /** A `text/event-json` body, in its place in the stream; false when it is no event (the socket is dropped). */
  event(body: Buffer): boolean
  /** FreeSWITCH's `text/disconnect-notice`. */
  disconnectNotice(): void
}

export interface EslSessionOptions {
  readonly host: string
  readonly port: number
  readonly password: string
  /** TCP keepalive: idle time before the first keepalive probe. */
  readonly keepAliveMs: number
  readonly logger: Logger
}

export class EslSession {
  /** Sockets opened so far; the current one's number. */
  private socketGeneration = 0
  private socket: Socket | undefined
  /** The attempt under way, not connected yet. */
  private connecting: Socket | undefined
  private reader: EslReader | undefined
  /** The current socket authenticated: the queue may be written. */
  private authenticatedNow = false
  /** Our commands in order, not written yet (withdrawn ones are skipped when their turn comes). */
  private queue: Outgoing[] = []
  /** The one command written on the current socket whose reply has not been read yet. */
  private inFlight: Outgoing | undefined
  private running = true
  private retryMs = FIRST_RETRY_MS
  private retryTimer: NodeJS.Timeout | undefined
  /** The refused password was logged (once until a socket authenticates: the attempts go on every second). */
  private refusalLogged = false

  constructor(
    private readonly opts: EslSessionOptions,
    private readonly hooks: EslSessionHooks,
  ) {
    this.connect()
  }

  get generation(): number {
    return this.socketGeneration
  }

  get socketOpen(): boolean {
    return this.socket !== undefined && !this.socket.destroyed
  }

  /** Bytes received on the current socket (the cheapest proof that FreeSWITCH is sending), if one is open. */
  get bytesRead(): number | undefined {
    return this.socket?.bytesRead
  }

  /** The current socket authenticated: commands sent now are written on it, in turn. */
  get authenticated(): boolean {
    return this.authenticatedNow
  }

  /** A command of ours is written and its reply has not come. */
  get awaitingReply(): boolean {
    return this.inFlight !== undefined && this.authenticatedNow
  }

  /** Queues a command behind the others; written when its turn comes on an authenticated socket, if it still may be. */
  send(command: Outgoing): void {
    this.queue.push(command)
    this.writeNext()
  }

  /** Gives up every command not written yet (they never will be): how many there were. */
  withdrawQueued(why: 'disconnected' | 'timeout'): number {
    let n = 0
    for (const o of this.queue) if (o.withdraw(why)) n += 1
    this.queue = []
    return n
  }

  /** Closes the socket and stops reconnecting. */
  end(): void {
    this.running = false
    clearTimeout(this.retryTimer)
    this.connecting?.destroy()
    if (this.socket !== undefined) this.gone(this.socket)
  }

  /** A reply, for the command in flight. */
  private onReply(headers: Buffer | undefined, body: Buffer): void {
    const command = this.inFlight
    this.inFlight = undefined
    if (command === undefined) {
      this.opts.logger.warn('FreeSWITCH sent a reply while no command was waiting for one: ignored')
      return
    }
    command.answer(headers === undefined ? '' : (parseHeaders(headers).replyText ?? ''), body)
    this.writeNext()
  }

  /** A new socket greets us: `auth` goes first, before anything queued. */
  private onAuthRequest(): void {
    const gen = this.socketGeneration
    const auth = new Outgoing(`auth ${this.opts.password}`)
    void auth.outcome.then((r) => {
      if (gen !== this.socketGeneration || !this.socketOpen) return
      if (r.kind !== 'answered' || !r.replyText.startsWith('+OK')) {
        if (!this.refusalLogged) this.opts.logger.error({ reply: r.kind === 'answered' ? r.replyText : r.kind }, 'FreeSWITCH refused the Event Socket password')
        this.refusalLogged = true
        return
      }
      this.refusalLogged = false
      this.authenticatedNow = true
      this.hooks.authenticated(gen)
      this.writeNext()
    })
    this.write(auth)
  }

  private connect(): void {
    if (!this.running) return
    const socket = net.connect({ host: this.opts.host, port: this.opts.port })
    this.connecting = socket
    let gen = 0
    let authenticated = false
    socket.once('connect', () => {
      this.connecting = undefined
      this.socketGeneration += 1
      gen = this.socketGeneration
      this.socket = socket
      this.authenticatedNow = false
      socket.setNoDelay(true)
      socket.setKeepAlive(true, this.opts.keepAliveMs)
      // What the reader hands on, in the order of the wire.
      this.reader = new EslReader(socket, {
        event: (body) => this.hooks.event(body),
        reply: (headers, body) => this.onReply(headers, body),
        authRequest: () => this.onAuthRequest(),
        disconnectNotice: () => this.hooks.disconnectNotice(),
      })
      this.hooks.opened(gen)
    })
    // The socket is gone at the first of these: 'end' (FreeSWITCH closed it), 'error', 'close'.
    const gone = () => {
      if (gen !== 0 && this.socket === socket) {
        authenticated = this.authenticatedNow
        this.gone(socket)
      }
    }
    socket.once('end', () => {
      gone()
      socket.destroy()
    })
    socket.on('error', (e: NodeJS.ErrnoException) => {
      gone()
      if (e.code === 'ECONNREFUSED') this.retryMs = Math.min(MAX_RETRY_MS, Math.floor((this.retryMs * 6) / 5))
    })
    socket.once('close', () => {
      if (this.connecting === socket) this.connecting = undefined
      gone()
      if (!this.running) return
      if (authenticated) {
        this.retryMs = FIRST_RETRY_MS
        setImmediate(() => this.connect())
      } else this.retryTimer = setTimeout(() => this.connect(), this.retryMs)
    })
  }

  private gone(socket: Socket): void {
    const gen = this.socketGeneration
    this.socket = undefined
    this.authenticatedNow = false
    this.reader?.stop()
    this.reader = undefined
    const command = this.inFlight
    this.inFlight = undefined
    command?.socketGone()
    if (!socket.destroyed) socket.destroy()
    this.hooks.closed(gen)
  }

  /** Writes the next command still to be written, when the socket is authenticated and nothing is in flight. */
  private writeNext(): void {
    while (this.inFlight === undefined && this.authenticatedNow && this.queue.length > 0) {
      this.write(this.queue.shift() as Outgoing)
    }
  }

  private write(command: Outgoing): void {
    const socket = this.socket
    if (socket === undefined) return void command.withdraw('disconnected')
    const bytes = command.take(this.socketGeneration)
    if (bytes === undefined) return
    this.inFlight = command
    socket.write(bytes)
  }
}
