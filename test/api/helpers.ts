/**
 * Test harness of the API: the real app on an ephemeral port, with the shipped example
 * configuration plus a second domain built here, and an engine that records the plans it gets.
 */
import type t from 'tap'
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { Writable } from 'node:stream'
import { createApp } from '../../src/api/app.js'
import type { RecordingReader } from '../../src/api/recordings/routes.js'
import { loadConfig, type LoadedConfig } from '../../src/config/load.js'
import { domainSchema, type DomainConfig } from '../../src/config/schema.js'
import { runtimeOf, type Runtime } from '../../src/runtime/store.js'
import type { OriginationAccepted, OriginationEngine, OriginationPlan } from '../../src/origination/plan.js'
import type { OriginationRefusal } from '../../src/origination/refusal.js'
import { createLogger } from '../../src/util/logger.js'
import { ok, type Result } from '../../src/util/result.js'

export const DOMAIN_A = 'example.test'
export const TOKEN_A = 'demo-token-example-test'
/** The plain token whose sha256 the example domain stores. */
export const HASHED_TOKEN_A = 'hashed-demo-token-example'
export const DOMAIN_B = 'other.test'
export const TOKEN_B = 'token-of-the-other-domain'
export const TOKEN_B_HASHED = 'second-token-of-other-domain'

/** A domain without the IVR privilege, with a label two users share, and users A lacks. */
export const domainB: DomainConfig = domainSchema.parse({
  name: DOMAIN_B,
  api_tokens: [TOKEN_B, `sha256:${createHash('sha256').update(TOKEN_B_HASHED).digest('hex')}`],
  privileges: [],
  channel_limit: 5,
  gateway: 'pstn-b',
  calling_numbers: ['0600000000'],
  users: [
    { id: '71', name: 'zara', label: 'Twin', extension: '1071', did: '0601231071', email: 'zara@other.test', password: 'zara-secret' },
    { id: '72', name: 'yuri', label: 'Twin', extension: '1072', email: 'yuri@other.test', password: 'yuri-secret' },
    { id: '73', name: 'xena', extension: '1073', password: 'xena-secret' },
  ],
  groups: [
    { id: '80', name: 'desk', label: 'Desk', type: 'HUNT', extension: '2080', members: ['zara', 'yuri'], answer_timeout: 30, member_answer_timeout: 5 },
    { id: '81', name: 'desk2', label: 'Desk', type: 'HUNT', extension: '2081', members: ['yuri'] },
  ],
  extensions: [],
})

let loaded: LoadedConfig | undefined
export async function exampleConfig(): Promise<LoadedConfig> {
  if (loaded === undefined) {
    const r = await loadConfig('conf/daemon.yaml')
    if (!r.ok) throw new Error(r.error.map((p) => `${p.file} ${p.path} ${p.reason}`).join('\n'))
    loaded = r.value
  }
  return loaded
}

/** Records every plan; answers with `reply` (default: one UUID per call, numbered). */
export class RecordingEngine implements OriginationEngine {
  readonly plans: OriginationPlan[] = []
  reply: ((plan: OriginationPlan) => Promise<Result<OriginationAccepted, OriginationRefusal>>) | undefined
  async originate(plan: OriginationPlan): Promise<Result<OriginationAccepted, OriginationRefusal>> {
    this.plans.push(plan)
    if (this.reply !== undefined) return this.reply(plan)
    return ok({ uuids: [`uuid-${this.plans.length}-a`, `uuid-${this.plans.length}-b`] })
  }
  last(): OriginationPlan | undefined {
    return this.plans[this.plans.length - 1]
  }
}

export interface Harness {
  readonly base: string
  readonly engine: RecordingEngine
  readonly logs: Array<Record<string, unknown>>
  /** Whether /healthz sees FreeSWITCH connected. */
  connected: boolean
  runtime: Runtime
  close(): Promise<void>
}

export interface HarnessOptions {
  engine?: OriginationEngine
  /** The recordings the routes serve (test/api/recordings.test.ts); none: the routes answer 404. */
  recordings?: RecordingReader
  bodyLimit?: number
  prefix?: string
}

export async function startApp(opts: HarnessOptions = {}): Promise<Harness & { server: Server }> {
  const base = await exampleConfig()
  const config: LoadedConfig = {
    ...base,
    daemon: {
      ...base.daemon,
      http: { ...base.daemon.http, body_limit: opts.bodyLimit ?? base.daemon.http.body_limit, prefix: opts.prefix ?? base.daemon.http.prefix },
    },
    domains: [...base.domains, domainB],
  }
  const logs: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const recording = new RecordingEngine()
  let n = 0
  const h = {
    engine: recording,
    logs,
    connected: true,
    runtime: runtimeOf(config),
  }
  const app = createApp({
    runtime: () => h.runtime,
    engine: opts.engine ?? recording,
    health: { isConnected: () => h.connected },
    logger: createLogger('debug', sink),
    newRequestId: () => `req-${++n}`,
    ...(opts.recordings !== undefined ? { recordings: opts.recordings } : {}),
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(h, {
    base: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((e) => (e === undefined ? resolve() : reject(e)))
      }),
  })
}

export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
export const AUTH_A = basic(DOMAIN_A, TOKEN_A)
export const AUTH_B = basic(DOMAIN_B, TOKEN_B)

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown>
  readonly text: string
}

export async function send(url: string, init: RequestInit): Promise<Reply> {
  const res = await fetch(url, init)
  const text = await res.text()
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    // left empty: the test asserts on text
  }
  return { status: res.status, headers: res.headers, body, text }
}

/** POST a JSON body to an operation with the credentials of domain A (unless told otherwise; null: none). */
export function post(h: Harness, operation: string, body: unknown, auth: string | null = AUTH_A): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (auth !== null) headers.authorization = auth
  return send(`${h.base}/api/${operation}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

const errorId = (r: Reply): unknown => (r.body.error as { id?: unknown } | undefined)?.id
export const errorDescription = (r: Reply): string => String((r.body.error as { description?: unknown } | undefined)?.description)

/** The assertion object tap hands a subtest (the last overload of t.test takes only the callback). */
type SubtestCallback = Parameters<typeof t.test>[0]
export type Asserts = SubtestCallback extends (t: infer T) => unknown ? T : never

/**
 * Asserts an error reply: the status, `{result_code: 500, error: {id, description}}` and
 * nothing else, and that the description names `mentions` (a parameter, usually).
 */
export function isError(t: Asserts, r: Reply, status: number, id: string, mentions?: string): void {
  t.equal(r.status, status, `status ${status} (${r.text})`)
  t.equal(r.body.result_code, 500, 'result_code 500')
  t.equal(errorId(r), id, `error id ${id}`)
  t.equal(Object.keys(r.body).join(','), 'result_code,error', 'body has only result_code and error')
  t.equal(typeof errorDescription(r), 'string', 'a description')
  if (mentions !== undefined) t.ok(errorDescription(r).includes(mentions), `description "${errorDescription(r)}" mentions ${mentions}`)
  t.ok(!/\bat .*\.(ts|js):\d+/.test(r.text), 'no stack trace')
}

/**
 * good(): the call succeeds and exactly one more plan reached the engine (returned);
 * bad(): the call fails as told and nothing reached the engine.
 */
export function operation(h: Harness, op: string) {
  const call = (body: unknown, auth?: string) => post(h, op, body, auth)
  const good = async (t: Asserts, body: unknown, auth?: string): Promise<OriginationPlan | undefined> => {
    const before = h.engine.plans.length
    const r = await call(body, auth)
    t.equal(r.status, 200, `200 (${r.text})`)
    t.equal(h.engine.plans.length, before + 1, 'the engine got a plan')
    return h.engine.last()
  }
  const bad = async (t: Asserts, body: unknown, status: number, id: string, mentions?: string, auth?: string): Promise<Reply> => {
    const before = h.engine.plans.length
    const r = await call(body, auth)
    isError(t, r, status, id, mentions)
    t.equal(h.engine.plans.length, before, 'nothing reached the engine')
    return r
  }
  return { call, good, bad }
}
