/**
 * One production-like setup per test: a temporary copy of test/faults/fixtures with free ports
 * written in, the standalone simulator in a process of its own, the daemon in another (in
 * `freeswitch` mode, pointed at the simulator), an independent ESL observer, and an HTTP client
 * for the API and /healthz. The daemon's journal sits in the copy (its default folder beside
 * daemon.yaml), so a daemon restarted on the same copy replays it.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import YAML from 'yaml'
import { daemonSchema } from '../../../src/config/schema.js'
import { waitFor as waitForCondition } from '../../support/wait.js'
import { EslObserver } from './observer.js'
import { spawnTsx, type LogLine, type ManagedProcess } from './procs.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))
export const DOMAIN = 'faults.test'
export const TOKEN = 'faults-token-0123456789'
/** Simulated delays run 10 times faster (answer_after 2 = 200 ms). */
export const TIME_SCALE = 0.1

export { sleep } from '../../support/wait.js'

/** test/support/wait.ts's waitFor with this suite's longer default: processes start and restart here. */
export const waitFor = (what: string, cond: () => boolean | Promise<boolean>, ms = 10_000, every = 20): Promise<void> => waitForCondition(what, cond, ms, every)

/** A port free right now (bound to 0, read, released). */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.address() as net.AddressInfo).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

type Doc = Record<string, unknown>

export interface CallbackSettings {
  readonly timeout_ms?: number
  readonly backoff_initial_ms?: number
  readonly backoff_max_ms?: number
  /** Retries by time (issue 11 item 3); left out when the running schema does not know it yet. */
  readonly give_up_after_ms?: number
  readonly concurrency_per_domain?: number
}

/** Whether this version of the daemon's schema accepts a `callbacks` key (so the suite runs before and after it lands). */
function schemaKnowsCallbackKey(key: string, value: unknown): boolean {
  const parsed = daemonSchema.safeParse({ freeswitch: { mode: 'freeswitch' }, xml_curl: { username: 'u', password: 'password1' }, callbacks: { [key]: value } })
  return parsed.success
}

export interface StackOptions {
  readonly callbacks?: CallbackSettings
  readonly channelLimit?: number
  readonly domainEdit?: (doc: Doc) => void
}

export interface Reply {
  /** 0 when the connection died before a reply (the daemon was killed): the outcome is unknown. */
  readonly status: number
  readonly requestId: string
  readonly json: { result_code?: number; uuids?: string[]; error?: { id: string; description?: string } } | undefined
  readonly failure?: string
  /** The connection was refused (the daemon was down): the request never reached it. */
  readonly neverSent?: boolean
}

export class FaultStack {
  sim: ManagedProcess | undefined
  daemon: ManagedProcess | undefined
  /** Every daemon process started, the killed ones included (their logs stay readable). */
  readonly daemons: ManagedProcess[] = []
  readonly observer: EslObserver
  daemonStarts = 0
  simStarts = 0

  constructor(
    private readonly t: Test,
    readonly dir: string,
    readonly configFile: string,
    readonly httpPort: number,
    readonly eslPort: number,
    /** The daemon's xml_curl listener, which the simulator posts to. */
    readonly xmlCurlPort: number,
  ) {
    this.observer = new EslObserver(eslPort)
    t.teardown(() => this.observer.stop())
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`
  }

  /** Starts the simulator process and waits until it listens and the observer is subscribed. */
  async startSim(): Promise<ManagedProcess> {
    const sim = spawnTsx(this.t, `simulator#${++this.simStarts}`, 'src/sim/main.ts', ['--config', this.configFile, '--time-scale', String(TIME_SCALE)])
    this.sim = sim
    await sim.waitLog('simulator listening')
    const before = this.observer.connections
    this.observer.start()
    await waitFor('the observer subscribed', () => this.observer.connected && this.observer.connections > before, 10000, 5)
    return sim
  }

  /** Starts the daemon process on the same files (and journal); waits until it serves HTTP (and, by default, the ESL link is up). */
  async startDaemon(opts: { waitLink?: boolean } = {}): Promise<ManagedProcess> {
    const daemon = spawnTsx(this.t, `daemon#${++this.daemonStarts}`, 'src/main.ts', ['--config', this.configFile])
    this.daemon = daemon
    this.daemons.push(daemon)
    await daemon.waitLog('daemon listening', 1, 30000)
    if (opts.waitLink !== false) await waitFor('/healthz 200', async () => (await this.healthz()) === 200, 15000, 20)
    return daemon
  }

  /** Log lines with this msg from every daemon process so far. */
  daemonLogs(msg: string): LogLine[] {
    return this.daemons.flatMap((d) => d.lines.filter((l) => l.msg === msg))
  }

  async healthz(): Promise<number> {
    try {
      const res = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      return res.status
    } catch {
      return 0
    }
  }

  /** POST {prefix}/<op>; a connection that dies before the reply is status 0. */
  async call(op: string, body: unknown, timeoutMs = 20000): Promise<Reply> {
    try {
      const res = await fetch(`${this.baseUrl}/api/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
      const text = await res.text()
      let json: Reply['json']
      try {
        json = JSON.parse(text) as Reply['json']
      } catch {
        json = undefined
      }
      return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', json }
    } catch (e) {
      const code = ((e as Error).cause as { code?: string } | undefined)?.code
      return { status: 0, requestId: '', json: undefined, failure: `${(e as Error).message}${code !== undefined ? ` (${code})` : ''}`, neverSent: code === 'ECONNREFUSED' }
    }
  }
}

export async function faultStack(t: Test, opts: StackOptions = {}): Promise<FaultStack> {
  const dir = mkdtempSync(join(tmpdir(), 'cod-faults-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(FIXTURES, dir, { recursive: true })
  const configFile = join(dir, 'daemon.yaml')
  const httpPort = await freePort()
  const eslPort = await freePort()
  const xmlCurlPort = await freePort()
  editYaml(configFile, (doc) => {
    ;(doc.http as Doc).port = httpPort
    ;(doc.xml_curl as Doc).port = xmlCurlPort
    ;(doc.freeswitch as Doc).port = eslPort
    const cb: Doc = { ...(doc.callbacks as Doc), ...(opts.callbacks ?? {}) }
    if (cb.give_up_after_ms !== undefined && !schemaKnowsCallbackKey('give_up_after_ms', cb.give_up_after_ms)) {
      // Before retries by time existed: the nearest the old schema allows.
      delete cb.give_up_after_ms
      cb.max_attempts = 20
    }
    // The receiver listens on loopback, which the outbound address guard refuses unless allowed.
    if (schemaKnowsCallbackKey('allow', ['127.0.0.1/32'])) cb.allow = ['127.0.0.1/32']
    doc.callbacks = cb
  })
  editYaml(join(dir, 'domains', `${DOMAIN}.yaml`), (doc) => {
    if (opts.channelLimit !== undefined) doc.channel_limit = opts.channelLimit
    opts.domainEdit?.(doc)
  })
  return new FaultStack(t, dir, configFile, httpPort, eslPort, xmlCurlPort)
}

export function editYaml(file: string, edit: (doc: Doc) => void): void {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as Doc
  edit(doc)
  writeFileSync(file, YAML.stringify(doc))
}
