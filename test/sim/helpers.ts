/**
 * Test helpers: a raw ESL client that keeps every byte it receives (so tests can assert exact
 * bytes) and parses messages the way esl-lite does, and a small test domain.
 */
import net from 'node:net'
import { domainSchema, type DomainConfig } from '../../src/config/schema.js'
import { Simulator, type SimulatorOptions } from '../../src/sim/index.js'

export interface Msg {
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The exact bytes of this message (headers, blank line, body). */
  readonly raw: string
}

export type Ev = Record<string, string | string[] | undefined>

export class RawEsl {
  raw = Buffer.alloc(0)
  private pending = Buffer.alloc(0)
  readonly messages: Msg[] = []
  private read = 0
  private waiters: Array<() => void> = []
  closed = false

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.raw = Buffer.concat([this.raw, chunk])
      this.pending = Buffer.concat([this.pending, chunk])
      this.parse()
    })
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
  }

  static connect(port: number): Promise<RawEsl> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawEsl(s)))
      s.once('error', reject)
    })
  }

  private wake(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  private parse(): void {
    for (;;) {
      const end = this.pending.indexOf('\n\n')
      if (end < 0) return
      const head = this.pending.subarray(0, end).toString('utf8')
      const headers: Record<string, string> = {}
      for (const line of head.split('\n')) {
        const i = line.indexOf(': ')
        if (i > 0) headers[line.slice(0, i)] = line.slice(i + 2)
      }
      const len = headers['Content-Length'] !== undefined ? Number(headers['Content-Length']) : 0
      if (this.pending.length < end + 2 + len) return
      const body = this.pending.subarray(end + 2, end + 2 + len).toString('utf8')
      const raw = this.pending.subarray(0, end + 2 + len).toString('utf8')
      this.pending = this.pending.subarray(end + 2 + len)
      this.messages.push({ headers, body, raw })
      this.wake()
    }
  }

  send(text: string): void {
    this.socket.write(text)
  }

  /** The next unread message (optionally the next one matching `pred`, skipping others). */
  async next(pred: (m: Msg) => boolean = () => true, timeoutMs = 3000): Promise<Msg> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      while (this.read < this.messages.length) {
        const m = this.messages[this.read++] as Msg
        if (pred(m)) return m
      }
      if (this.closed) throw new Error('socket closed')
      const left = deadline - Date.now()
      if (left <= 0) throw new Error('timeout waiting for a message')
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
  }

  /** Sends a command and returns its command/reply or api/response. */
  async command(text: string): Promise<Msg> {
    this.send(`${text}\n\n`)
    return this.next((m) => m.headers['Content-Type'] === 'command/reply' || m.headers['Content-Type'] === 'api/response')
  }

  async api(text: string): Promise<string> {
    return (await this.command(`api ${text}`)).body
  }

  /** The next event (json) matching `pred`. */
  async event(pred: (e: Ev) => boolean = () => true, timeoutMs = 3000): Promise<Ev> {
    const m = await this.next((x) => x.headers['Content-Type'] === 'text/event-json' && pred(JSON.parse(x.body) as Ev), timeoutMs)
    return JSON.parse(m.body) as Ev
  }

  /** The first event received so far or later (read or not) that matches `pred`. */
  async waitFor(pred: (e: Ev) => boolean, timeoutMs = 3000): Promise<Ev> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.events().find(pred)
      if (found !== undefined) return found
      if (this.closed) throw new Error('socket closed')
      const left = deadline - Date.now()
      if (left <= 0) throw new Error('timeout waiting for an event')
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
  }

  /** All json events received so far (read or not). */
  events(): Ev[] {
    return this.messages.filter((m) => m.headers['Content-Type'] === 'text/event-json').map((m) => JSON.parse(m.body) as Ev)
  }

  async login(password = 'ClueCon', events = STANDARD_EVENTS): Promise<void> {
    await this.next((m) => m.headers['Content-Type'] === 'auth/request')
    await this.command(`auth ${password}`)
    if (events !== '') await this.command(`event json ${events}`)
  }

  close(): void {
    this.socket.destroy()
  }
}

/** The event list the captures subscribe to (test/fixtures/freeswitch/esl/01-session-basics.txt). */
export const STANDARD_EVENTS =
  'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_HANGUP CHANNEL_HANGUP_COMPLETE CHANNEL_DESTROY CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_PROGRESS CHANNEL_PROGRESS_MEDIA CHANNEL_PARK CHANNEL_EXECUTE_COMPLETE BACKGROUND_JOB'

export function testDomain(extra: Partial<Record<string, unknown>> = {}): DomainConfig {
  return domainSchema.parse({
    name: 'example.test',
    api_tokens: ['plain-token-for-tests'],
    channel_limit: 10,
    gateway: 'pstn',
    users: [
      { id: '1', name: 'alice', label: 'Alice', extension: '1001', password: 'secret1', sim: { terminals: [{ answer_after: 1 }, { behaviour: 'no_answer' }] } },
      { id: '2', name: 'bob', extension: '1002', password: 'secret2', sim: { terminals: [{ answer_after: 2 }] } },
      { id: '3', name: 'carol', extension: '1003', password: 'secret3', sim: { terminals: [{ behaviour: 'busy' }] } },
      { id: '4', name: 'dave', extension: '1004', password: 'secret4', sim: { terminals: [{ behaviour: 'unregistered' }] } },
      { id: '5', name: 'erin', extension: '1005', password: 'secret5', sim: { terminals: [{ behaviour: 'reject' }] } },
    ],
    sim: { pstn: { default: { answer_after: 1 }, '0311112222': { behaviour: 'busy' } } },
    ...extra,
  })
}

/** A simulator on an ephemeral port, closed when the test ends. */
export async function startSim(
  t: { teardown: (fn: () => unknown) => void },
  opts: Partial<SimulatorOptions> = {},
): Promise<{ sim: Simulator; port: number; connect: () => Promise<RawEsl> }> {
  const sim = new Simulator({ domains: [testDomain()], password: 'ClueCon', timeScale: 0.05, ...opts })
  const port = await sim.listen(0)
  const clients: RawEsl[] = []
  t.teardown(async () => {
    for (const c of clients) c.close()
    await sim.close()
  })
  return {
    sim,
    port,
    connect: async () => {
      const c = await RawEsl.connect(port)
      clients.push(c)
      return c
    },
  }
}

export const names = (events: Ev[], uuid?: string): string[] =>
  events.filter((e) => uuid === undefined || e['Unique-ID'] === uuid || e['Event-Name'] === 'BACKGROUND_JOB').map((e) => String(e['Event-Name']))

export { sleep } from '../support/wait.js'
