/**
 * Shared by the fault suite: the daemon (startDaemon, built-in simulator) on a temporary copy of
 * test/faults/fixtures-in-process, a controllable callback receiver, small HTTP helpers and a log
 * capture.
 * Every socket a helper opens is closed by a teardown of the test that opened it.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import YAML from 'yaml'
import type { Daemon } from '../../../src/daemon.js'
import { createLogger } from '../../../src/util/logger.js'
import { startTestDaemon } from '../../support/daemon.js'
import { sleep, waitFor } from '../../support/wait.js'

/** Simulated seconds run 20 times faster (answer_after 1 = 50 ms). */
export const TIME_SCALE = 0.05
const FIXTURES = fileURLToPath(new URL('../fixtures-in-process/', import.meta.url))
export const TOKENS: Readonly<Record<string, string>> = {
  'fault.test': 'fault-token-0123456789',
  'other.test': 'other-token-0123456789',
}

export { sleep, waitFor }

type Doc = Record<string, unknown>
export interface FixtureEdits {
  readonly daemon?: (doc: Doc) => void
  /** Per domain file name without .yaml. */
  readonly domains?: Readonly<Record<string, (doc: Doc) => void>>
}

/** Copies a fixture folder to a temporary one (removed at teardown), applies edits, returns the daemon.yaml path. */
export function fixtureCopy(t: Test, edits: FixtureEdits = {}, from = FIXTURES): { configFile: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cod-fault-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(from, dir, { recursive: true })
  const configFile = join(dir, 'daemon.yaml')
  if (edits.daemon !== undefined) editYaml(configFile, edits.daemon)
  for (const [name, edit] of Object.entries(edits.domains ?? {})) editYaml(join(dir, 'domains', `${name}.yaml`), edit)
  return { configFile, dir }
}

export function editYaml(file: string, edit: (doc: Doc) => void): void {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as Doc
  edit(doc)
  writeFileSync(file, YAML.stringify(doc))
}

/** Log lines (pino JSON) kept in memory, to assert on what the daemon said. */
export class LogCapture {
  readonly lines: Array<Record<string, unknown>> = []
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue
        try {
          this.lines.push(JSON.parse(line) as Record<string, unknown>)
        } catch {
          this.lines.push({ msg: line })
        }
      }
      done()
    },
  })
  has(msg: string): boolean {
    return this.lines.some((l) => l.msg === msg)
  }
  count(msg: string): number {
    return this.lines.filter((l) => l.msg === msg).length
  }
}

export interface Stack {
  readonly daemon: Daemon
  readonly configFile: string
  readonly dir: string
  readonly logs: LogCapture
  /** POST {prefix}/<op> with the domain's token. */
  call(op: string, body: unknown, domain?: string): Promise<{ status: number; json: ApiReply; requestId: string }>
  healthz(): Promise<number>
}

export interface ApiReply {
  readonly result_code?: number
  readonly uuids?: string[]
  readonly error?: { id: string; description: string }
}

export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

export async function startStack(t: Test, edits: FixtureEdits = {}): Promise<Stack> {
  const { configFile, dir } = fixtureCopy(t, edits)
  const logs = new LogCapture()
  const daemon = await startTestDaemon(t, { configFile, logger: createLogger('info', logs.stream), simulatorPort: 0, simulatorTimeScale: TIME_SCALE })
  return {
    daemon,
    configFile,
    dir,
    logs,
    async call(op, body, domain = 'fault.test') {
      const res = await fetch(`${daemon.baseUrl}/api/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic(domain, TOKENS[domain] ?? '') },
        body: JSON.stringify(body),
      })
      return { status: res.status, json: (await res.json()) as ApiReply, requestId: res.headers.get('x-request-id') ?? '' }
    },
    async healthz() {
      const res = await fetch(`${daemon.baseUrl}/healthz`)
      await res.arrayBuffer()
      return res.status
    },
  }
}

export interface Delivery {
  readonly at: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** The status the receiver answered (0: it never answered). */
  status: number
}

export type Mode = 'accept' | 'fail503' | 'hang'

/**
 * A callback receiver that can be switched between accepting (204), failing (503) and hanging
 * (reads the request, never answers), closed (connection refused) and opened again on the same
 * port. It counts open sockets and their peak.
 */
export class CallbackReceiver {
  readonly deliveries: Delivery[] = []
  mode: Mode = 'accept'
  port = 0
  openSockets = 0
  peakSockets = 0
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly hanging = new Set<ServerResponse>()

  get url(): string {
    return `http://127.0.0.1:${this.port}/result`
  }

  /** Bodies the receiver accepted (answered 2xx), by X-Delivery-Id. */
  accepted(): Map<string, Delivery[]> {
    const m = new Map<string, Delivery[]>()
    for (const d of this.deliveries) {
      if (d.status < 200 || d.status > 299) continue
      const id = String(d.headers['x-delivery-id'])
      m.set(id, [...(m.get(id) ?? []), d])
    }
    return m
  }

  async open(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const d: Delivery = { at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 0 }
        this.deliveries.push(d)
        if (this.mode === 'hang') {
          this.hanging.add(res)
          res.on('close', () => this.hanging.delete(res))
          return
        }
        d.status = this.mode === 'accept' ? 204 : 503
        res.writeHead(d.status).end()
      })
    })
    server.on('connection', (s: Socket) => {
      this.sockets.add(s)
      this.openSockets++
      this.peakSockets = Math.max(this.peakSockets, this.openSockets)
      s.on('close', () => {
        this.sockets.delete(s)
        this.openSockets--
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as AddressInfo).port
    this.server = server
  }

  /** Stops listening and drops every connection (clients then get "connection refused"). */
  async close(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (server === undefined) return
    const closed = new Promise<void>((r) => server.close(() => r()))
    for (const s of this.sockets) s.destroy()
    await closed
  }
}

export async function receiver(t: Test, mode: Mode = 'accept'): Promise<CallbackReceiver> {
  const r = new CallbackReceiver()
  r.mode = mode
  await r.open()
  t.teardown(() => r.close())
  return r
}

/** Parsed callback bodies of deliveries the receiver accepted, one per delivery id. */
export function acceptedBodies(r: CallbackReceiver): Array<Record<string, unknown>> {
  return [...r.accepted().values()].map((ds) => JSON.parse(ds[0]?.body ?? '{}') as Record<string, unknown>)
}
