/**
 * A second, independent ESL connection to the switch (real or simulated) that records channel
 * events for the lane's comparison, and sends the few api commands the lane needs (show
 * channels). Written on node:net rather than the daemon's client so that what is observed does
 * not depend on the code under test.
 */
import { connect, type Socket } from 'node:net'

export interface RecordedEvent {
  readonly at: number
  readonly name: string
  readonly headers: Readonly<Record<string, string>>
}

const EVENTS = [
  'CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_PROGRESS_MEDIA', 'CHANNEL_ANSWER', 'CHANNEL_BRIDGE',
  'CHANNEL_UNBRIDGE', 'CHANNEL_PARK', 'CHANNEL_EXECUTE', 'CHANNEL_HANGUP', 'CHANNEL_HANGUP_COMPLETE',
  'CHANNEL_DESTROY', 'DTMF',
  // Recordings (test/realfs/recording.ts); not part of a leg's trace line (trace.ts SHOWN).
  'RECORD_START', 'RECORD_STOP',
]

export class EslTap {
  readonly events: RecordedEvent[] = []
  private buf = Buffer.alloc(0)
  private replies: Array<(body: string) => void> = []
  private listeners = new Set<(e: RecordedEvent) => void>()

  private constructor(private readonly socket: Socket) {}

  static async open(port: number, password: string): Promise<EslTap> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const tap = new EslTap(socket)
    socket.on('data', (chunk: Buffer) => tap.onData(chunk))
    socket.on('error', () => undefined)
    await tap.command(`auth ${password}`)
    await tap.command(`event json ${EVENTS.join(' ')}`)
    return tap
  }

  onEvent(fn: (e: RecordedEvent) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Replies come in the order of the commands (auth/request greetings are skipped). */
  private command(text: string): Promise<string> {
    return new Promise((resolve) => {
      this.replies.push(resolve)
      this.socket.write(`${text}\n\n`)
    })
  }

  api(cmd: string): Promise<string> {
    return this.command(`api ${cmd}`)
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk])
    for (;;) {
      const end = this.buf.indexOf('\n\n')
      if (end < 0) return
      const head = this.buf.subarray(0, end).toString()
      const headers: Record<string, string> = {}
      for (const line of head.split('\n')) {
        const i = line.indexOf(':')
        if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim()
      }
      const len = Number(headers['Content-Length'] ?? '0')
      if (this.buf.length < end + 2 + len) return
      const body = this.buf.subarray(end + 2, end + 2 + len).toString()
      this.buf = this.buf.subarray(end + 2 + len)
      const type = headers['Content-Type']
      if (type === 'auth/request') continue
      if (type === 'command/reply') this.replies.shift()?.(headers['Reply-Text'] ?? '')
      else if (type === 'api/response') this.replies.shift()?.(body)
      else if (type === 'text/event-json') {
        const parsed = JSON.parse(body) as Record<string, string>
        const e: RecordedEvent = { at: Date.now(), name: parsed['Event-Name'] ?? '', headers: parsed }
        this.events.push(e)
        for (const l of this.listeners) l(e)
      }
    }
  }

  close(): void {
    this.socket.destroy()
  }
}
