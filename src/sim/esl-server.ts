/**
 * Inbound mod_event_socket (mod_event_socket.c v1.10.12: read_packet, parse_command,
 * event_handler, api_exec) over TCP.
 *
 * - The server speaks first (`auth/request`); before `auth` every command but `exit` gets
 *   `-ERR command not found` (capture 05); a wrong password gets `-ERR invalid`, the disconnect
 *   notice and a closed socket (capture 04).
 * - Commands are read like read_packet: leading blank lines skipped, the command line, then
 *   `Name: value` headers, a blank line, and Content-Length bytes of body when given; a message
 *   may arrive in any number of TCP chunks.
 * - One command at a time per connection. While a command runs, events for this connection wait
 *   and follow its reply: `api uuid_kill` answers `+OK` before the CHANNEL_HANGUP (capture 06), and
 *   a blocking `api originate` delivers no event until its api/response (capture 22).
 * - `bgapi` replies `+OK Job-UUID` (the client's `Job-UUID` header is used as is, capture 22),
 *   then fires BACKGROUND_JOB with Job-Command, Job-Command-Arg and the result as body.
 * - `event`, `nixevent`, `noevents`, `filter` and the event_handler filter rules; json, plain
 *   (capture 08) and xml formats.
 */
import net from 'node:net'
import { randomUUID } from 'node:crypto'
import type { Logger } from '../util/logger.js'
import { executeApi } from './api.js'
import { str2cause } from './causes.js'
import type { SwitchCore } from './core.js'
import { AUTH_REQUEST, DISCONNECT_NOTICE, apiResponse, commandReply, eventJson, eventPlain } from './esl-format.js'
import type { SimEvent } from './events.js'

/** switch_event.c EVENT_NAMES (names `event` accepts). */
const EVENT_NAMES = new Set(
  (
    'CUSTOM CLONE CHANNEL_CREATE CHANNEL_DESTROY CHANNEL_STATE CHANNEL_CALLSTATE CHANNEL_ANSWER CHANNEL_HANGUP ' +
    'CHANNEL_HANGUP_COMPLETE CHANNEL_EXECUTE CHANNEL_EXECUTE_COMPLETE CHANNEL_HOLD CHANNEL_UNHOLD CHANNEL_BRIDGE ' +
    'CHANNEL_UNBRIDGE CHANNEL_PROGRESS CHANNEL_PROGRESS_MEDIA CHANNEL_OUTGOING CHANNEL_PARK CHANNEL_UNPARK ' +
    'CHANNEL_APPLICATION CHANNEL_ORIGINATE CHANNEL_UUID API LOG INBOUND_CHAN OUTBOUND_CHAN STARTUP SHUTDOWN PUBLISH ' +
    'UNPUBLISH TALK NOTALK SESSION_CRASH MODULE_LOAD MODULE_UNLOAD DTMF MESSAGE PRESENCE_IN NOTIFY_IN PRESENCE_OUT ' +
    'PRESENCE_PROBE MESSAGE_WAITING MESSAGE_QUERY ROSTER CODEC BACKGROUND_JOB DETECTED_SPEECH DETECTED_TONE ' +
    'PRIVATE_COMMAND HEARTBEAT TRAP ADD_SCHEDULE DEL_SCHEDULE EXE_SCHEDULE RE_SCHEDULE RELOADXML NOTIFY ' +
    'PHONE_FEATURE PHONE_FEATURE_SUBSCRIBE SEND_MESSAGE RECV_MESSAGE REQUEST_PARAMS CHANNEL_DATA GENERAL COMMAND ' +
    'SESSION_HEARTBEAT CLIENT_DISCONNECTED SERVER_DISCONNECTED SEND_INFO RECV_INFO RECV_RTCP_MESSAGE ' +
    'SEND_RTCP_MESSAGE CALL_SECURE NAT RECORD_START RECORD_STOP PLAYBACK_START PLAYBACK_STOP CALL_UPDATE FAILURE ' +
    'SOCKET_DATA MEDIA_BUG_START MEDIA_BUG_STOP CONFERENCE_DATA_QUERY CONFERENCE_DATA CALL_SETUP_REQ ' +
    'CALL_SETUP_RESULT CALL_DETAIL DEVICE_STATE TEXT SHUTDOWN_REQUESTED ALL'
  ).split(' '),
)

/** switch_name_event: case-insensitive, with or without the `SWITCH_EVENT_` prefix. */
function eventName(token: string): string | undefined {
  const upper = token.toUpperCase()
  if (EVENT_NAMES.has(upper)) return upper
  if (upper.length > 13 && EVENT_NAMES.has(upper.slice(13))) return upper.slice(13)
  return undefined
}

const LOG_LEVELS: Readonly<Record<string, number>> = { console: 0, alert: 1, crit: 2, err: 3, error: 3, warning: 4, notice: 5, info: 6, debug: 7 }

interface Command {
  /** The first line, verbatim (without CR/LF). */
  readonly line: string
  /** Headers by lower-case name (switch_event_get_header is case-insensitive). */
  readonly headers: ReadonlyMap<string, string>
  readonly body?: string
}

export interface EslServerOptions {
  readonly core: SwitchCore
  readonly password: string
  readonly logger: Logger
  readonly onCommand: (line: string) => void
}

export class EslServer {
  private server?: net.Server
  private readonly conns = new Set<EslConnection>()

  constructor(private readonly opts: EslServerOptions) {}

  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => {
        const c = new EslConnection(socket, this.opts, () => this.conns.delete(c))
        this.conns.add(c)
      })
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        this.server = server
        const addr = server.address()
        resolve(typeof addr === 'object' && addr !== null ? addr.port : port)
      })
    })
  }

  /** Destroys every ESL socket abruptly (no notice): the calls stay up. */
  dropConnections(): void {
    for (const c of [...this.conns]) c.destroy()
  }

  async close(): Promise<void> {
    this.dropConnections()
    const server = this.server
    this.server = undefined
    if (server !== undefined) await new Promise<void>((r) => server.close(() => r()))
  }
}

class EslConnection {
  private buf: Buffer = Buffer.alloc(0)
  private authed = false
  private format: 'plain' | 'json' | 'xml' = 'plain'
  private eventsOn = false
  private all = false
  private readonly names = new Set<string>()
  private customAll = false
  private readonly customs = new Set<string>()
  private readonly filters: Array<[string, string]> = []
  private logging = false
  private readonly queue: Command[] = []
  private processing = false
  private holding = false
  private held: string[] = []
  private closed = false
  private readonly unsubscribe: () => void

  constructor(
    private readonly socket: net.Socket,
    private readonly opts: EslServerOptions,
    private readonly onGone: () => void,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', () => this.gone())
    socket.on('close', () => this.gone())
    this.unsubscribe = opts.core.bus.on((ev) => this.onEvent(ev))
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

  private reply(text: string, extra: ReadonlyArray<readonly [string, string]> = []): void {
    this.writeNow(commandReply(text, extra))
  }

  /** Sends the disconnect notice and closes (FIN), as after `exit` and a wrong password. */
  private hangUp(): void {
    this.writeNow(DISCONNECT_NOTICE)
    this.gone()
    this.socket.end()
  }

  // ------------------------------------------------------------ reading

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk])
    for (;;) {
      const cmd = this.parseOne()
      if (cmd === undefined) break
      this.queue.push(cmd)
    }
    void this.drain()
  }

  /** read_packet: one command from the buffer, or undefined until more bytes arrive. */
  private parseOne(): Command | undefined {
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
    if (lower.startsWith('filter ')) return this.filter(line.slice(7))
    if (lower.startsWith('sendmsg')) return this.sendmsg(line.slice(7), cmd)
    if (lower.startsWith('sendevent')) return this.reply(`+OK ${randomUUID()}`)
    if (lower.startsWith('api ')) return this.api(line.slice(4))
    if (lower.startsWith('bgapi ')) return this.bgapi(line.slice(6), cmd)
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
    if (lower.startsWith('event')) return this.event(line)
    if (lower.startsWith('nixevent')) return this.nixevent(line)
    if (lower.startsWith('noevents')) return this.noevents()
    this.reply('-ERR command not found')
  }

  private async api(text: string): Promise<void> {
    const sp = text.indexOf(' ')
    const name = sp < 0 ? text : text.slice(0, sp)
    const arg = sp < 0 ? '' : text.slice(sp + 1)
    const r = await executeApi(this.opts.core, name, arg)
    let body = r === undefined ? `-ERR ${name} Command not found!\n` : r.text
    // api_exec: an empty reply becomes "-ERR no reply\n" (only for api, not bgapi).
    if (body === '') body = '-ERR no reply\n'
    this.writeNow(apiResponse(body))
    r?.after?.()
  }

  private bgapi(text: string, cmd: Command): void {
    const sp = text.indexOf(' ')
    const name = sp < 0 ? text : text.slice(0, sp)
    const arg = sp < 0 ? '' : text.slice(sp + 1)
    const job = cmd.headers.get('job-uuid') ?? randomUUID()
    this.reply(`+OK Job-UUID: ${job}`, [['Job-UUID', job]])
    const core = this.opts.core
    void (async () => {
      const r = await executeApi(core, name, arg)
      const body = r === undefined ? `-ERR ${name} Command not found!\n` : r.text
      core.bus.fire(
        'BACKGROUND_JOB',
        [
          ['Job-UUID', job],
          ['Job-Command', name],
          ['Job-Command-Arg', arg],
        ],
        body,
      )
      r?.after?.()
    })()
  }

  /** sendmsg <uuid>: call-command execute (execute-app-name/-arg or text/plain body, event-uuid, loops) or hangup. */
  private sendmsg(rest: string, cmd: Command): void {
    const core = this.opts.core
    let uuid = rest.trim()
    if (uuid === '') uuid = cmd.headers.get('session-id') ?? ''
    const s = uuid === '' ? undefined : core.sessions.get(uuid)
    if (s === undefined) return this.reply(`-ERR invalid session id [${uuid}]`)
    const h = cmd.headers
    const command = (h.get('call-command') ?? '').toLowerCase()
    if (command === 'execute') {
      const app = h.get('execute-app-name')
      let arg = h.get('execute-app-arg') ?? ''
      if (arg === '' && (h.get('content-type') ?? '').toLowerCase() === 'text/plain') arg = cmd.body ?? ''
      const loops = Math.max(1, parseInt(h.get('loops') ?? '1', 10) || 1)
      const eventUuid = h.get('event-uuid')
      if (app !== undefined && app !== '') {
        core.queueMessage(s, async () => {
          for (let i = 0; i < loops && s.up; i++) await core.execApp(s, app, arg, eventUuid !== undefined ? { appUuid: eventUuid } : {})
        })
      }
    } else if (command === 'hangup') {
      core.hangup(s, str2cause(h.get('hangup-cause')))
    }
    this.reply('+OK')
  }

  private event(line: string): void {
    const tokens = line.split(' ').slice(1)
    let keyCount = 0
    let custom = false
    tokens.forEach((token, i) => {
      if (i === 0) {
        const f = token.toLowerCase()
        if (f === 'xml' || f === 'plain' || f === 'json') {
          this.format = f
          return
        }
      }
      if (custom) {
        if (token !== '') this.customs.add(token)
        return
      }
      const name = eventName(token)
      if (name === undefined) return
      keyCount++
      if (name === 'ALL') {
        this.all = true
        this.customAll = true
      }
      this.names.add(name)
      if (name === 'CUSTOM') custom = true
    })
    if (keyCount === 0) return this.reply('-ERR no keywords supplied')
    this.eventsOn = true
    this.reply(`+OK event listener enabled ${this.format}`)
  }

  private nixevent(line: string): void {
    const tokens = line.split(' ').slice(1)
    let keyCount = 0
    let custom = false
    for (const token of tokens) {
      if (custom) {
        this.customs.delete(token)
        continue
      }
      const name = eventName(token)
      if (name === undefined) continue
      keyCount++
      if (name === 'CUSTOM') custom = true
      else if (name === 'ALL') {
        this.all = false
        this.names.clear()
      } else {
        if (this.all) {
          this.all = false
          for (const n of EVENT_NAMES) if (n !== 'ALL') this.names.add(n)
        }
        this.names.delete(name)
      }
    }
    if (keyCount === 0) return this.reply('-ERR no keywords supplied')
    this.eventsOn = true
    this.reply('+OK events nixed')
  }

  private noevents(): void {
    if (!this.eventsOn) return this.reply('-ERR not listening for events')
    this.eventsOn = false
    this.all = false
    this.customAll = false
    this.names.clear()
    this.customs.clear()
    this.held = this.held.filter((t) => !t.includes('Content-Type: text/event-'))
    this.reply('+OK no longer listening for events')
  }

  private filter(text: string): void {
    const rest = text.replace(/^ +/, '')
    const sp = rest.indexOf(' ')
    let name = sp < 0 ? rest : rest.slice(0, sp)
    let value: string | undefined = sp < 0 ? undefined : rest.slice(sp + 1)
    if (name.toLowerCase() === 'delete' && value !== undefined) {
      const sp2 = value.indexOf(' ')
      name = sp2 < 0 ? value : value.slice(0, sp2)
      value = sp2 < 0 ? undefined : value.slice(sp2 + 1)
      if (name.toLowerCase() === 'all') this.filters.splice(0)
      else {
        for (let i = this.filters.length - 1; i >= 0; i--) {
          const f = this.filters[i] as [string, string]
          if (f[0].toLowerCase() === name.toLowerCase() && (value === undefined || f[1] === value)) this.filters.splice(i, 1)
        }
      }
      return this.reply(`+OK filter deleted. [${name}][${value ?? ''}]`)
    }
    if (value === undefined) return this.reply('-ERR invalid syntax')
    if (name.toLowerCase() === 'add') {
      const sp2 = value.indexOf(' ')
      name = sp2 < 0 ? value : value.slice(0, sp2)
      value = sp2 < 0 ? '' : value.slice(sp2 + 1)
    }
    this.filters.push([name, value])
    this.reply(`+OK filter added. [${name}]=[${value}]`)
  }

  // ------------------------------------------------------------ events (event_handler)

  private wants(ev: SimEvent): boolean {
    if (!this.authed || !this.eventsOn) return false
    let send = this.all || this.names.has(ev.name)
    if (send && ev.name === 'CUSTOM' && !this.customAll) {
      const sub = header(ev, 'Event-Subclass')
      send = sub === undefined || this.customs.has(sub)
    }
    if (!send || this.filters.length === 0) return send
    send = false
    for (const [name, value] of this.filters) {
      const hval = header(ev, name)
      if (hval === undefined) continue
      let pos = true
      let i = 0
      for (; i < value.length; i++) {
        const c = value[i]
        if (c === '+') pos = true
        else if (c === '-') pos = false
        else if (c !== ' ') break
      }
      const compTo = value.slice(i)
      if (send && pos) continue
      const cmp = value.startsWith('/') ? regexTest(compTo, hval) : hval.toLowerCase() === compTo.toLowerCase()
      if (cmp) {
        if (pos) send = true
        else {
          send = false
          break
        }
      }
    }
    return send
  }

  private onEvent(ev: SimEvent): void {
    if (this.closed || !this.wants(ev)) return
    this.write(formatted(ev, this.format))
  }
}

/** Each event is serialised once per format, however many connections receive it. */
const serialised = new WeakMap<SimEvent, Map<string, string>>()
function formatted(ev: SimEvent, format: 'json' | 'plain' | 'xml'): string {
  let byFormat = serialised.get(ev)
  if (byFormat === undefined) serialised.set(ev, (byFormat = new Map()))
  let text = byFormat.get(format)
  if (text === undefined) {
    text = format === 'json' ? eventJson(ev) : format === 'plain' ? eventPlain(ev) : eventXml(ev)
    byFormat.set(format, text)
  }
  return text
}

function header(ev: SimEvent, name: string): string | undefined {
  const lower = name.toLowerCase()
  return ev.headers.find(([k]) => k.toLowerCase() === lower)?.[1]
}

/** switch_regex_perform with a `/pattern/flags` filter value. */
function regexTest(pattern: string, value: string): boolean {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  try {
    return m === null ? new RegExp(pattern.replace(/^\//, '')).test(value) : new RegExp(m[1] as string, (m[2] ?? '').includes('i') ? 'i' : '').test(value)
  } catch {
    return false
  }
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
