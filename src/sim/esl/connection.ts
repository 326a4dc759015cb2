/**
 * One inbound mod_event_socket connection (mod_event_socket.c v1.10.12: parse_command,
 * event_handler): authentication, the command dispatch, and the order of what it writes.
 *
 * - The server speaks first (`auth/request`); before `auth` every command but `exit` gets
 *   `-ERR command not found` (test/fixtures/freeswitch/esl/05-command-before-auth.txt); a wrong
 *   password gets `-ERR invalid`, the disconnect notice and a closed socket
 *   (test/fixtures/freeswitch/esl/04-auth-wrong-password.txt).
 * - One command at a time per connection. While a command runs, events for this connection wait
 *   and follow its reply: `api uuid_kill` answers `+OK` before the CHANNEL_HANGUP
 *   (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt), and a blocking `api originate`
 *   delivers no event until its api/response (test/fixtures/freeswitch/esl/22-misc-replies.txt).
 * - Reading commands (framing.ts), choosing events (subscription.ts) and the commands that act
 *   on the switch (commands.ts) are their own modules; json, plain
 *   (test/fixtures/freeswitch/esl/08-originate-user-form-event-plain.txt) and xml formats are
 *   written by format.ts.
 */
import type net from 'node:net'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../../util/logger.js'
import type { Switch } from '../core/switch.js'
import type { SimEvent } from '../model/events.js'
import { api, bgapi, sendmsg } from './commands.js'
import { AUTH_REQUEST, DISCONNECT_NOTICE, SHUTDOWN_NOTICE, commandReply, formatted } from './format.js'
import { CommandReader, type Command } from './framing.js'
import { EventSubscription } from './subscription.js'

const LOG_LEVELS: Readonly<Record<string, number>> = { console: 0, alert: 1, crit: 2, err: 3, error: 3, warning: 4, notice: 5, info: 6, debug: 7 }

export interface EslConnectionOptions {
  readonly sw: Switch
  readonly password: string
  readonly logger: Logger
  /** Every command line received, verbatim (Simulator.commands). */
  readonly onCommand: (line: string) => void
}

export class EslConnection {
  private readonly reader = new CommandReader()
  private readonly events = new EventSubscription()
  private authed = false
  private logging = false
  private readonly queue: Command[] = []
  private processing = false
  private holding = false
  private held: string[] = []
  private closed = false
  private readonly unsubscribe: () => void
  /** Writes at once, ahead of held events (command replies). */
  private readonly send = (text: string): void => this.writeNow(text)

  constructor(
    private readonly socket: net.Socket,
    private readonly opts: EslConnectionOptions,
    private readonly onGone: () => void,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', () => this.gone())
    socket.on('close', () => this.gone())
    this.unsubscribe = opts.sw.bus.on((ev) => this.onEvent(ev))
    socket.write(AUTH_REQUEST)
  }

  destroy(): void {
    this.gone()
    this.socket.destroy()
  }

  private gone(): void {
    if (this.closed) return
    this.closed = true
    this.unsubscribe()
    this.onGone()
  }

  private write(text: string): void {
    if (this.closed) return
    if (this.holding) this.held.push(text)
    else this.socket.write(text)
  }

  private writeNow(text: string): void {
    if (!this.closed) this.socket.write(text)
  }

  private reply(text: string): void {
    this.writeNow(commandReply(text))
  }

  /** Sends the disconnect notice and closes (FIN), as after `exit` and a wrong password. */
  private hangUp(notice = DISCONNECT_NOTICE): void {
    this.writeNow(notice)
    this.gone()
    this.socket.end()
  }

  /** The switch is shutting down: the shutdown notice, then FIN (esl/26-fsctl-shutdown.txt). */
  shutDown(): void {
    this.hangUp(SHUTDOWN_NOTICE)
  }

  // ------------------------------------------------------------ reading

  private onData(chunk: Buffer): void {
    this.reader.push(chunk)
    for (;;) {
      const cmd = this.reader.next()
      if (cmd === undefined) break
      this.queue.push(cmd)
    }
    void this.drain()
  }

  private async drain(): Promise<void> {
    if (this.processing) return
    this.processing = true
    try {
      while (this.queue.length > 0 && !this.closed) {
        const cmd = this.queue.shift() as Command
        this.opts.onCommand(cmd.line)
        this.holding = true
        try {
          await this.handle(cmd)
        } catch (e) {
          this.opts.logger.error({ err: e, command: cmd.line }, 'sim ESL: command failed')
        } finally {
          this.holding = false
          const held = this.held
          this.held = []
          for (const t of held) this.writeNow(t)
        }
      }
    } finally {
      this.processing = false
    }
  }

  // ------------------------------------------------------------ commands (parse_command)

  private async handle(cmd: Command): Promise<void> {
    const line = cmd.line
    const lower = line.toLowerCase()
    if (lower.startsWith('exit') || line.startsWith('...')) {
      this.reply('+OK bye')
      this.hangUp()
      return
    }
    if (!this.authed) {
      if (lower.startsWith('auth ')) {
        if (line.slice(5) === this.opts.password) {
          this.authed = true
          this.reply('+OK accepted')
        } else {
          this.reply('-ERR invalid')
          this.hangUp()
        }
        return
      }
      this.reply('-ERR command not found')
      return
    }
    const sw = this.opts.sw
    if (lower.startsWith('filter ')) return this.reply(this.events.filter(line.slice(7)))
    if (lower.startsWith('sendmsg')) return this.reply(sendmsg(sw, line.slice(7), cmd))
    if (lower.startsWith('sendevent')) return this.reply(`+OK ${randomUUID()}`)
    if (lower.startsWith('api ')) return api(sw, line.slice(4), this.send)
    if (lower.startsWith('bgapi ')) return bgapi(sw, line.slice(6), cmd, this.send)
    if (lower.startsWith('log')) {
      const level = line.slice(3).trim() || 'debug'
      const n = LOG_LEVELS[level.toLowerCase()]
      if (n === undefined) return this.reply('-ERR invalid log level')
      this.logging = true
      return this.reply(`+OK log level ${level} [${n}]`)
    }
    if (lower.startsWith('linger') || lower.startsWith('nolinger')) return this.reply('-ERR not controlling a session')
    if (lower.startsWith('nolog')) {
      const was = this.logging
      this.logging = false
      return this.reply(was ? '+OK no longer logging' : '-ERR not loging')
    }
    if (lower.startsWith('event')) return this.reply(this.events.event(line))
    if (lower.startsWith('nixevent')) return this.reply(this.events.nixevent(line))
    if (lower.startsWith('noevents')) {
      // Events already held for this command are no longer wanted either.
      if (this.events.listening) this.held = this.held.filter((t) => !t.includes('Content-Type: text/event-'))
      return this.reply(this.events.noevents())
    }
    this.reply('-ERR command not found')
  }

  // ------------------------------------------------------------ events (event_handler)

  private onEvent(ev: SimEvent): void {
    if (this.closed || !this.authed || !this.events.wants(ev)) return
    this.write(formatted(ev, this.events.format))
  }
}
