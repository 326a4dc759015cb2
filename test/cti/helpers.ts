/**
 * Harness of the CTI tests: the real CTI on a real HTTP server (port 0) inside a Koa app, the
 * fake FreeSWITCH of test/support/fake-pbx.ts, and WebSocket clients (the `ws` library) that
 * queue what they receive.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import Koa from 'koa'
import WebSocket from 'ws'
import { daemonSchema, domainSchema, type DaemonConfig } from '../../src/config/schema.js'
import { runtimeOf, type Runtime } from '../../src/runtime/store.js'
import { createChannelModel, type ChannelModel } from '../../src/channels/index.js'
import { createCti, type Cti, type CtiCommands } from '../../src/cti/index.js'
import type { CtiPeers } from '../../src/cti/peers.js'
import { createLogger } from '../../src/util/logger.js'
import { FakePbx } from '../support/fake-pbx.js'

export const DOMAIN_A = 'example.test'
const TOKEN_A = 'token-of-example-test-domain'
export const DOMAIN_B = 'other.test'
const TOKEN_B = 'token-of-the-other-test-domain'

/** Two domains whose users share ids and extensions: isolation must come from the domain. */
export const domains = [
  domainSchema.parse({
    name: DOMAIN_A,
    api_tokens: [TOKEN_A],
    channel_limit: 20,
    gateway: 'pstn',
    calling_numbers: ['0501230000'],
    users: [
      { id: '1', name: 'alice', label: 'Alice', extension: '1001', did: '0501231001', email: 'alice@example.test', password: 'alice-secret' },
      { id: '2', name: 'bob', label: 'Bob', extension: '1002', email: 'bob@example.test', password: 'bob-secret' },
      { id: '3', name: 'carol', label: 'Twin', extension: '1003', password: 'carol-secret' },
      { id: '4', name: 'dave', label: 'Twin', extension: '1004', password: 'dave-secret' },
    ],
    groups: [{ id: '10', name: 'sales', extension: '2001', members: ['alice', 'bob'] }],
    extensions: [{ number: '3001', xml_url: 'https://ivr.example.test/menu' }],
  }),
  domainSchema.parse({
    name: DOMAIN_B,
    api_tokens: [TOKEN_B],
    channel_limit: 20,
    gateway: 'pstn-b',
    users: [{ id: '1', name: 'eve', extension: '1001', password: 'eve-secret' }],
  }),
]

export function makeRuntime(cti: Partial<DaemonConfig['cti']> = {}): Runtime {
  const daemon = daemonSchema.parse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' } })
  return runtimeOf({ file: 'test.yaml', daemon: { ...daemon, cti: { ...daemon.cti, ...cti } }, domains })
}

/**
 * The fake FreeSWITCH (test/support/fake-pbx.ts): replays events to the CTI and records the
 * commands it runs. Re-exported because test/api/throttle.test.ts takes it from here.
 */
export { FakePbx }

export interface Harness {
  readonly port: number
  readonly base: string
  readonly wsBase: string
  readonly pbx: FakePbx
  readonly cti: Cti
  readonly logs: Array<Record<string, unknown>>
  /** CTI's subscriptions to the channel model still open. */
  channelListeners(): number
  /** The injectable clock (epoch ms). */
  clock: number
  close(): Promise<void>
}

export interface HarnessOptions {
  cti?: Partial<DaemonConfig['cti']>
  commands?: CtiCommands
  pbx?: FakePbx
  /** The other boxes of a cluster (test/cti/peers-bus.ts links harnesses in memory). */
  peers?: CtiPeers
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const runtime = makeRuntime(opts.cti)
  const pbx = opts.pbx ?? new FakePbx()
  const logs: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>)
      cb()
    },
  })
  const harness = { clock: Date.now() } as { clock: number }
  const logger = createLogger('info', sink)
  // The daemon's channel model, which CTI reads (created first, as in the daemon).
  const channels = createChannelModel({ pbx, logger, directory: () => runtime.directory, now: () => harness.clock })
  // CTI sees the model through this, which counts its subscriptions.
  let channelListeners = 0
  const seenByCti: ChannelModel = Object.assign(Object.create(channels) as ChannelModel, {
    onChange: (listener: Parameters<ChannelModel['onChange']>[0]) => {
      channelListeners += 1
      const off = channels.onChange(listener)
      return () => {
        channelListeners -= 1
        off()
      }
    },
  })
  const cti = createCti({
    runtime: () => runtime,
    pbx,
    channels: seenByCti,
    logger,
    now: () => harness.clock,
    ...(opts.commands === undefined ? {} : { commands: opts.commands }),
    ...(opts.peers === undefined ? {} : { peers: opts.peers }),
  })
  const app = new Koa()
  app.use(cti.router.routes())
  const server: Server = createServer(app.callback())
  cti.attach(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(harness, {
    port,
    base: `http://127.0.0.1:${port}`,
    wsBase: `ws://127.0.0.1:${port}`,
    pbx,
    cti,
    logs,
    channelListeners: () => channelListeners,
    close: async () => {
      await cti.close()
      channels.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  })
}

export const basic = (domain: string, token: string): string => `Basic ${Buffer.from(`${domain}:${token}`).toString('base64')}`
export const AUTH_A = basic(DOMAIN_A, TOKEN_A)
export const AUTH_B = basic(DOMAIN_B, TOKEN_B)

export type Message = Record<string, unknown> & { type: string }

/** A connected client that queues messages; `next()` waits for the next one. */
export class Client {
  readonly received: Message[] = []
  private readonly waiters: Array<(m: Message) => void> = []
  closeCode: number | undefined
  readonly closed: Promise<number>

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as Message
      const w = this.waiters.shift()
      if (w !== undefined) w(m)
      else this.received.push(m)
    })
    this.closed = new Promise((resolve) =>
      ws.on('close', (code) => {
        this.closeCode = code
        resolve(code)
      }),
    )
  }

  next(timeoutMs = 2000): Promise<Message> {
    const queued = this.received.shift()
    if (queued !== undefined) return Promise.resolve(queued)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter)
        if (i >= 0) this.waiters.splice(i, 1)
        reject(new Error('no message within the time limit'))
      }, timeoutMs)
      const waiter = (m: Message): void => {
        clearTimeout(timer)
        resolve(m)
      }
      this.waiters.push(waiter)
    })
  }

  /** Sends a command and waits for its result (other messages stay queued). */
  async command(cmd: Record<string, unknown>): Promise<Message> {
    this.ws.send(JSON.stringify(cmd))
    const skipped: Message[] = []
    for (;;) {
      const m = await this.next()
      if (m.type === 'result') {
        this.received.unshift(...skipped)
        return m
      }
      skipped.push(m)
    }
  }

  close(): Promise<number> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close()
    return this.closed
  }
}

export type ConnectResult =
  | { readonly ok: true; readonly client: Client }
  | { readonly ok: false; readonly status: number; readonly body: Record<string, unknown>; readonly headers: Record<string, unknown> }

/** Opens `path` (e.g. `/api/ws_cti?...`); an HTTP refusal of the upgrade is returned, not thrown. */
export function connect(h: Harness, path: string, headers: Record<string, string> = {}, options: WebSocket.ClientOptions = {}): Promise<ConnectResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${h.wsBase}${path}`, { headers, ...options })
    // Queue from the first frame: initial_info is sent right after the handshake.
    const client = new Client(ws)
    ws.once('open', () => resolve({ ok: true, client }))
    ws.once('unexpected-response', (_req, res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => {
        let body: Record<string, unknown>
        try {
          body = JSON.parse(text) as Record<string, unknown>
        } catch {
          body = { text }
        }
        resolve({ ok: false, status: res.statusCode ?? 0, body, headers: res.headers })
        ws.terminate()
      })
    })
    ws.once('error', (e) => reject(e))
  })
}

/** Opens and expects success; returns the client with initial_info already read. */
export async function open(h: Harness, path: string, headers: Record<string, string> = {}): Promise<{ client: Client; initial: Message }> {
  const r = await connect(h, path, headers)
  if (!r.ok) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`)
  const initial = await r.client.next()
  return { client: r.client, initial }
}

export async function genTicket(h: Harness, uri: unknown, auth = AUTH_A): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${h.base}/api/gen_ws_ticket`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ uri }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** Resolves after pending I/O callbacks ran (lets the server process what a client sent). */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export const channelOf = (m: Message): Record<string, unknown> => m.channel as Record<string, unknown>
