/**
 * The whole daemon on the built-in simulator, over real sockets, as operators run it:
 * startDaemon with the shipped configuration (ports 0, simulated time sped up), a local
 * callback receiver, and small helpers to call the API and wait for things to happen.
 */
import { appendFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Daemon } from '../../src/daemon.js'
import { startTestDaemon, stopTestDaemon } from '../support/daemon.js'
import { waitForValue } from '../support/wait.js'

export interface ReceivedCallback {
  readonly body: unknown
  readonly headers: IncomingHttpHeaders
}

export interface Harness {
  readonly daemon: Daemon
  readonly callbackUrl: string
  readonly callbacks: ReceivedCallback[]
  post(operation: string, body: unknown, auth?: string): Promise<{ status: number; body: Record<string, unknown> }>
  waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs?: number): Promise<T>
  close(): Promise<void>
}

/**
 * When COD_E2E_RECORD names a file, every reply post() sees is appended to it as one JSON line
 * (operation, status, the headers the OpenAPI document describes, body): test/openapi/ runs
 * end-to-end files with it and checks each reply against the document.
 */
export const RECORD_ENV = 'COD_E2E_RECORD'
const RECORDED_HEADERS = ['content-type', 'x-request-id', 'idempotent-replayed', 'www-authenticate', 'retry-after', 'allow']

export interface RecordedReply {
  readonly operation: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: unknown
  /** The request body sent, when the caller passed it. */
  readonly request?: unknown
}

export function recordReply(operation: string, res: Response, body: unknown, request?: unknown): void {
  const file = process.env[RECORD_ENV]
  if (file === undefined || file === '') return
  const headers: Record<string, string> = {}
  for (const name of RECORDED_HEADERS) {
    const v = res.headers.get(name)
    if (v !== null) headers[name] = v
  }
  const rec: RecordedReply = { operation, status: res.status, headers, body, ...(request !== undefined ? { request } : {}) }
  appendFileSync(file, `${JSON.stringify(rec)}\n`)
}

export const DEMO_AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`

export async function startHarness(opts: { configFile?: string; timeScale?: number; channelSampleIntervalMs?: number } = {}): Promise<Harness> {
  const callbacks: ReceivedCallback[] = []
  const receiver = createServer((req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString()))
    req.on('end', () => {
      callbacks.push({ body: JSON.parse(text) as unknown, headers: req.headers })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`

  // A journal of its own (startTestDaemon's): test files run in parallel, and the shipped one sits in conf/.
  const daemon = await startTestDaemon(undefined, {
    ...(opts.configFile !== undefined ? { configFile: opts.configFile } : {}),
    simulatorPort: 0,
    simulatorTimeScale: opts.timeScale ?? 0.05,
    ...(opts.channelSampleIntervalMs !== undefined ? { channelSampleIntervalMs: opts.channelSampleIntervalMs } : {}),
  })
  const waitFor = <T>(what: string, probe: () => T | undefined | false, timeoutMs = 5000): Promise<T> => waitForValue(what, probe, timeoutMs, 20)

  return {
    daemon,
    callbackUrl,
    callbacks,
    waitFor,
    async post(operation, body, auth = DEMO_AUTH) {
      const res = await fetch(`${daemon.baseUrl}/api/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth },
        body: JSON.stringify(body),
      })
      const json = (await res.json()) as Record<string, unknown>
      recordReply(operation, res, json, body)
      return { status: res.status, body: json }
    },
    async close() {
      await stopTestDaemon(daemon)
      await new Promise<void>((r) => receiver.close(() => r()))
    },
  }
}
