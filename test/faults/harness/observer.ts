/**
 * An Event Socket client of its own, independent of the daemon: what FreeSWITCH (here the
 * standalone simulator) really does, seen from outside. It counts live channels (CHANNEL_CREATE
 * to CHANNEL_HANGUP: the daemon's channel limit counts a channel until its hangup, and so does
 * this) per domain and in total, keeps the peak, and records every request id
 * (`variable_cod_request_id`) that ever got a channel.
 *
 * Raw TCP on purpose: no code shared with the daemon's ESL client. Frames are the plain
 * Content-Length framing of mod_event_socket (test/fixtures/freeswitch/esl/01-session-basics.txt).
 * When the simulator dies its channels die with it: the live set is emptied at the disconnect,
 * and the observer reconnects until stopped.
 */
import net from 'node:net'

export interface ObservedChannel {
  readonly uuid: string
  readonly domain: string
  readonly requestId: string | undefined
  readonly createdAt: number
}

interface Frame {
  readonly headers: Map<string, string>
  readonly body: string
}

export class EslObserver {
  /** Live channels by uuid. */
  readonly live = new Map<string, ObservedChannel>()
  /** Every request id that ever had a channel, with the first time seen. */
  readonly rungRequestIds = new Map<string, number>()
  /** How many channels each request id had, over all time. */
  readonly channelsByRequest = new Map<string, number>()
  readonly peakByDomain = new Map<string, number>()
  peakTotal = 0
  created = 0
  connections = 0
  private socket: net.Socket | undefined
  private stopped = false
  private connectedNow = false
  private retry: NodeJS.Timeout | undefined

  constructor(
    private readonly port: number,
    private readonly password = 'ClueCon',
    private readonly host = '127.0.0.1',
  ) {}

  get connected(): boolean {
    return this.connectedNow
  }

  liveOf(domain: string): number {
    let n = 0
    for (const c of this.live.values()) if (c.domain === domain) n++
    return n
  }

  start(): void {
    this.stopped = false
    this.connect()
  }

  stop(): void {
    this.stopped = true
    if (this.retry !== undefined) clearTimeout(this.retry)
    this.socket?.destroy()
    this.socket = undefined
  }

  /** Sends one `api` command on the observer's own socket (e.g. `fsctl shutdown`). */
  sendApi(command: string): void {
    this.socket?.write(`api ${command}\n\n`)
  }

  private connect(): void {
    if (this.stopped) return
    const socket = net.connect(this.port, this.host)
    this.socket = socket
    let buf = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      for (;;) {
        const parsed = readFrame(buf)
        if (parsed === undefined) break
        buf = buf.subarray(parsed.used)
        this.onFrame(socket, parsed.frame)
      }
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined
      if (this.connectedNow) {
        // The switch is gone (killed) or closed us: its channels are gone with it.
        this.connectedNow = false
        this.live.clear()
      }
      if (!this.stopped) this.retry = setTimeout(() => this.connect(), 25)
    })
  }

  private onFrame(socket: net.Socket, f: Frame): void {
    const type = f.headers.get('Content-Type')
    if (type === 'auth/request') {
      socket.write(`auth ${this.password}\n\n`)
      socket.write('event json CHANNEL_CREATE CHANNEL_HANGUP\n\n')
      return
    }
    if (type === 'command/reply' && (f.headers.get('Reply-Text') ?? '').startsWith('+OK event listener')) {
      this.connectedNow = true
      this.connections++
      return
    }
    if (type !== 'text/event-json') return
    let ev: Record<string, string>
    try {
      ev = JSON.parse(f.body) as Record<string, string>
    } catch {
      return
    }
    const uuid = ev['Unique-ID']
    if (uuid === undefined) return
    if (ev['Event-Name'] === 'CHANNEL_CREATE') {
      const requestId = ev.variable_cod_request_id
      const ch: ObservedChannel = { uuid, domain: domainOf(ev), requestId, createdAt: Date.now() }
      this.created++
      this.live.set(uuid, ch)
      if (requestId !== undefined) {
        if (!this.rungRequestIds.has(requestId)) this.rungRequestIds.set(requestId, ch.createdAt)
        this.channelsByRequest.set(requestId, (this.channelsByRequest.get(requestId) ?? 0) + 1)
      }
      this.peakTotal = Math.max(this.peakTotal, this.live.size)
      this.peakByDomain.set(ch.domain, Math.max(this.peakByDomain.get(ch.domain) ?? 0, this.liveOf(ch.domain)))
    } else if (ev['Event-Name'] === 'CHANNEL_HANGUP') {
      this.live.delete(uuid)
    }
  }
}

/**
 * The domain of a channel as an outsider can tell it: the daemon's stamp, else the SIP domain
 * variables FreeSWITCH sets, else the host of the presence id; `?` when nothing says.
 */
function domainOf(ev: Record<string, string>): string {
  const direct = ev.variable_cod_domain ?? ev.variable_domain_name ?? ev.variable_dialed_domain
  if (direct !== undefined && direct !== '') return direct.toLowerCase()
  const presence = ev.variable_presence_id ?? ev['Channel-Presence-ID']
  const at = presence?.lastIndexOf('@') ?? -1
  return presence !== undefined && at >= 0 ? presence.slice(at + 1).toLowerCase() : '?'
}

function readFrame(buf: Buffer): { frame: Frame; used: number } | undefined {
  const end = buf.indexOf('\n\n')
  if (end < 0) return undefined
  const headers = new Map<string, string>()
  for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon), safeDecode(line.slice(colon + 1).trim()))
  }
  const length = Number(headers.get('Content-Length') ?? '0')
  const start = end + 2
  if (buf.length < start + length) return undefined
  return { frame: { headers, body: buf.subarray(start, start + length).toString('utf8') }, used: start + length }
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
