/**
 * The world of the hostile suite (hostile.test.ts): the whole daemon in-process with its
 * simulator, two domains, and the listeners that watch it from outside:
 *
 * - a CANARY on `[::]:<port>` (dual-stack, every local address: 127.0.0.1, 127.x, ::1, this
 *   host's own addresses) that counts every connection: every refused address form is aimed
 *   at its port, so any connection there is an outbound request that should not have been made;
 * - a document server on 127.0.0.77, the one address `ivr.fetch_allow` opens (so every other
 *   loopback address and port stays refused), serving IVR documents and JSON;
 * - a callback receiver on 127.0.0.78, the one address `callbacks.allow` opens.
 *
 * The configuration is written at start into a temporary folder (the servers' ports go into it).
 * Requests are sent with node:http from a chosen local address (`from`), so that throttled
 * "attacker" addresses (127.0.0.9...) never block the suite's own traffic from 127.0.0.1.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { Daemon } from '../../src/daemon.js'
import { daemonSchema } from '../../src/config/schema.js'
import type { Simulator } from '../../src/sim/index.js'
import { createLogger } from '../../src/util/logger.js'
import { startTestDaemon } from '../support/daemon.js'
import { waitForValue } from '../support/wait.js'

export const ALPHA = 'alpha.test'
const ALPHA_TOKEN = 'alpha-token-0123456789abcdef'
const BETA = 'beta.test'
const BETA_TOKEN = 'beta-token-0123456789abcdef'
export const XML_CURL_USER = 'freeswitch'
export const XML_CURL_PASSWORD = 'security-xml-curl-secret'
const DOCS_HOST = '127.0.0.77'
const RECEIVER_HOST = '127.0.0.78'
export const BODY_LIMIT = 65536
export const REQUEST_TIMEOUT_MS = 3000
export const MAX_FAILURES = 10
/** Secrets no answer of the API listener may ever carry (SIP passwords, the other tokens, signing secret). */
export const SECRETS = ['alice-sip-pass-A1', 'bob-sip-pass-B2', 'oscar-sip-pass-O9', XML_CURL_PASSWORD, 'alpha-signing-secret-xyz', BETA_TOKEN]

export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
export const AUTH_ALPHA = basic(ALPHA, ALPHA_TOKEN)
export const AUTH_BETA = basic(BETA, BETA_TOKEN)

export interface Req {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: Buffer | string
}

export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
  /** The API error id, when the body is an error body. */
  readonly errorId: string | undefined
}

/** How each hostile request ended, by family and outcome (printed at the end). */
export class Tally {
  readonly families = new Map<string, Map<string, number>>()
  /** What was observed besides the requests (log lines, documents run): printed, not counted. */
  readonly notes: string[] = []
  note(family: string, text: string): void {
    this.notes.push(`${family}: ${text}`)
  }
  count(family: string, outcome: string): void {
    let f = this.families.get(family)
    if (f === undefined) this.families.set(family, (f = new Map()))
    f.set(outcome, (f.get(outcome) ?? 0) + 1)
  }
  total(): number {
    let n = 0
    for (const f of this.families.values()) for (const v of f.values()) n += v
    return n
  }
  byOutcome(): Map<string, number> {
    const m = new Map<string, number>()
    for (const f of this.families.values()) for (const [k, v] of f) m.set(k, (m.get(k) ?? 0) + v)
    return m
  }
  lines(): string[] {
    return [...[...this.families].map(([name, f]) => `${name}: ${[...f].map(([k, v]) => `${k} ${v}`).join(', ')}`), ...this.notes.map((n) => `(observed) ${n}`)]
  }
}

export interface DocServer {
  readonly base: string
  /** Every request it got: path and the form or query fields. */
  readonly requests: Array<{ path: string; fields: URLSearchParams }>
  /** Serves `body` (with `type`, status 200 unless given) at `path`. */
  route(path: string, body: string, type?: string, status?: number, headers?: Record<string, string>): void
}

export interface World {
  readonly daemon: Daemon
  readonly sim: Simulator
  readonly api: string
  readonly canary: { readonly port: number; readonly hits: string[] }
  readonly docs: DocServer
  readonly receiver: { readonly base: string; readonly got: Array<{ path: string; body: string }> }
  readonly logs: Array<Record<string, unknown>>
  readonly tally: Tally
  /** Every answer of the API listener (secrets are looked for in them). */
  readonly answers: Answer[]
  send(req: Req, opts?: { from?: string; base?: string }): Promise<Answer>
  /** ESL command lines the simulator received since `since` (epoch ms). */
  eslSince(since: number): string[]
  waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs?: number): Promise<T>
  close(): Promise<void>
}

const listen = (server: Server | net.Server, host: string): Promise<number> =>
  new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)))

function yaml(o: unknown): string {
  // JSON is YAML: the files stay exact without a YAML writer.
  return `${JSON.stringify(o, null, 1)}\n`
}

function writeConfig(dir: string, docsPort: number): string {
  mkdirSync(join(dir, 'domains'))
  const daemon: Record<string, unknown> = {
    http: { host: '127.0.0.1', port: 0, prefix: '/api', body_limit: BODY_LIMIT, request_timeout_ms: REQUEST_TIMEOUT_MS, auth_throttle: { max_failures: MAX_FAILURES, window_ms: 60000 } },
    freeswitch: { mode: 'simulator', host: '127.0.0.1', port: 0, password: 'ClueCon', sip_profile: 'internal' },
    xml_curl: { path: '/freeswitch', username: XML_CURL_USER, password: XML_CURL_PASSWORD },
    directory: 'domains',
    callbacks: { timeout_ms: 1000, give_up_after_ms: 1000, backoff_initial_ms: 50, backoff_max_ms: 100, allow: [`${RECEIVER_HOST}/32`] },
    ivr: { fetch_allow: [`${DOCS_HOST}/32`], media_dir: '/prompts' },
    cti: { max_connections_per_user: 100 },
    log: { level: 'info' },
  }
  // The xml_curl listener of its own (docs/deploy.md), on any free port, when this daemon has one.
  if ('port' in daemonSchema.shape.xml_curl.shape) (daemon.xml_curl as Record<string, unknown>).port = 0
  writeFileSync(join(dir, 'daemon.yaml'), yaml(daemon))
  const up = { terminals: [{ answer_after: 0.5 }] }
  writeFileSync(
    join(dir, 'domains', `${ALPHA}.yaml`),
    yaml({
      name: ALPHA,
      api_tokens: [ALPHA_TOKEN],
      privileges: ['ON_THE_FLY_IVR_ALLOWED'],
      channel_limit: 100000,
      gateway: 'pstn-alpha',
      calling_numbers: ['0501230000'],
      callback_secret: 'alpha-signing-secret-xyz',
      users: [
        { id: 'a1', name: 'alice', label: 'Alice', extension: '1001', did: '0501231001', email: 'alice@alpha.test', password: 'alice-sip-pass-A1', sim: up },
        { id: 'b2', name: 'bob', label: 'Bob', extension: '1002', email: 'bob@alpha.test', password: 'bob-sip-pass-B2', sim: up },
        { id: 'c3', name: 'carol', label: 'Carol', extension: '1003', password: 'carol-sip-pass-C3', sim: { terminals: [{ behaviour: 'busy' }] } },
      ],
      groups: [{ id: 'g10', name: 'sales', label: 'Sales', extension: '2001', did: '0501232001', members: ['carol'] }],
      extensions: [{ number: '3001', xml_url: `http://${DOCS_HOST}:${docsPort}/menu` }],
      sim: { pstn: { default: { answer_after: 0.5 } } },
    }),
  )
  writeFileSync(
    join(dir, 'domains', `${BETA}.yaml`),
    yaml({
      name: BETA,
      api_tokens: [BETA_TOKEN],
      channel_limit: 100000,
      gateway: 'pstn-beta',
      calling_numbers: ['0607770000'],
      users: [
        { id: 'o9', name: 'oscar', label: 'Oscar', extension: '7009', did: '0607777009', email: 'oscar@beta.test', password: 'oscar-sip-pass-O9', sim: up },
        { id: 'p8', name: 'pat', label: 'Pat', extension: '7008', password: 'pat-sip-pass-P8', sim: up },
      ],
      groups: [{ id: 'g90', name: 'ops', label: 'Ops', extension: '7090', did: '0607777090', members: ['pat'] }],
      extensions: [{ number: '7300', xml_url: `http://${DOCS_HOST}:${docsPort}/beta-menu` }],
      sim: { pstn: { default: { behaviour: 'busy' } } },
    }),
  )
  return join(dir, 'daemon.yaml')
}

async function startCanary(): Promise<{ server: net.Server; port: number; hits: string[] }> {
  const hits: string[] = []
  const server = net.createServer((c) => {
    hits.push(`${c.remoteAddress ?? '?'} -> ${c.localAddress ?? '?'}`)
    c.destroy()
  })
  const port = await listen(server, '::')
  return { server, port, hits }
}

async function startDocs(): Promise<{ server: Server; docs: DocServer }> {
  const routes = new Map<string, { body: string; type: string; status: number; headers: Record<string, string> }>()
  const requests: Array<{ path: string; fields: URLSearchParams }> = []
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString('utf8')))
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x')
      requests.push({ path: u.pathname, fields: new URLSearchParams(req.method === 'GET' ? u.search : text) })
      // /hop?to=<url>: the server's own redirect, to a URL of the test's choosing.
      if (u.pathname === '/hop') return void res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end()
      const r = routes.get(u.pathname)
      if (r === undefined) return void res.writeHead(404).end()
      res.writeHead(r.status, { 'content-type': r.type, ...r.headers }).end(r.body)
    })
  })
  const port = await listen(server, DOCS_HOST)
  const docs: DocServer = {
    base: `http://${DOCS_HOST}:${port}`,
    requests,
    route: (path, body, type = 'application/xml', status = 200, headers = {}) => void routes.set(path, { body, type, status, headers }),
  }
  return { server, docs }
}

export async function startWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'cod-security-'))
  const canary = await startCanary()
  const { server: docsServer, docs } = await startDocs()
  const got: Array<{ path: string; body: string }> = []
  const receiverServer = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString('utf8')))
    req.on('end', () => {
      got.push({ path: req.url ?? '', body })
      // /hop answers a redirect to the canary: a callback must never follow it.
      if (req.url === '/hop') return void res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/followed` }).end()
      res.writeHead(204).end()
    })
  })
  const receiverPort = await listen(receiverServer, RECEIVER_HOST)
  const configFile = writeConfig(dir, Number(new URL(docs.base).port))

  const logs: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>)
        } catch {
          logs.push({ msg: line })
        }
      }
      cb()
    },
  })
  const daemon = await startTestDaemon(undefined, {
    configFile,
    journalDir: join(dir, 'journal'),
    logger: createLogger('info', sink),
    simulatorPort: 0,
    simulatorTimeScale: 0.05,
    linkTimeoutMs: 15_000,
  })
  const sim = daemon.simulator
  if (sim === undefined) throw new Error('simulator mode expected')

  const waitFor = <T>(what: string, probe: () => T | undefined | false, timeoutMs = 15000): Promise<T> => waitForValue(what, probe, timeoutMs, 25)

  const answers: Answer[] = []
  const send = (r: Req, opts: { from?: string; base?: string } = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const base = new URL(opts.base ?? daemon.baseUrl)
      const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8')
      const headers: Record<string, string> = { ...r.headers }
      if (body !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(body.length)
      const req = request(
        { host: base.hostname, port: base.port, method: r.method, path: r.path, headers, agent: false, ...(opts.from !== undefined ? { localAddress: opts.from } : {}) },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let errorId: string | undefined
            try {
              const j = JSON.parse(text) as { error?: { id?: unknown } }
              errorId = typeof j.error?.id === 'string' ? j.error.id : undefined
            } catch {
              errorId = undefined
            }
            const a = { status: res.statusCode ?? 0, headers: res.headers, text, errorId }
            if (opts.base === undefined) answers.push(a)
            resolve(a)
          })
          res.on('error', reject)
        },
      )
      // An upgrade that is accepted (101): recorded and closed at once (websocket.ts opens real ones).
      req.on('upgrade', (res, socket) => {
        socket.destroy()
        const a = { status: res.statusCode ?? 101, headers: res.headers, text: '', errorId: undefined }
        if (opts.base === undefined) answers.push(a)
        resolve(a)
      })
      req.setTimeout(20000, () => req.destroy(new Error(`${r.method} ${r.path}: no answer in 20 s`)))
      req.on('error', reject)
      req.end(body)
    })

  return {
    daemon,
    sim,
    api: daemon.baseUrl,
    canary: { port: canary.port, hits: canary.hits },
    docs,
    receiver: { base: `http://${RECEIVER_HOST}:${receiverPort}`, got },
    logs,
    tally: new Tally(),
    answers,
    send,
    eslSince: (since) => sim.commands.filter((c) => c.at >= since).map((c) => c.text),
    waitFor,
    async close() {
      await daemon.stop()
      for (const s of [canary.server, docsServer, receiverServer]) {
        if ('closeAllConnections' in s) s.closeAllConnections()
        await new Promise<void>((r) => s.close(() => r()))
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** `POST /api/<op>` with a JSON body and alpha's token unless told otherwise. */
export const apiPost = (op: string, body: unknown, auth = AUTH_ALPHA, extra: Record<string, string> = {}): Req => ({
  method: 'POST',
  path: `/api/${op}`,
  headers: { authorization: auth, 'content-type': 'application/json', ...extra },
  body: typeof body === 'string' ? body : JSON.stringify(body),
})

/** The outcome name of an answer for the tally: `200`, `400 invalid_parameter`, `408`... */
export const outcomeOf = (a: Answer): string => (a.errorId !== undefined ? `${a.status} ${a.errorId}` : String(a.status))

/** Runs `fn` over `items`, `width` at a time. */
export async function pool<T, R>(items: readonly T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i] as T, i)
      }
    }),
  )
  return out
}
