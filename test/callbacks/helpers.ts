/** Shared by the callback tests: a real HTTP receiver on port 0, a log capture, fast settings. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { createLogger, type Logger } from '../../src/util/logger.js'
import type { CallbackSettings } from '../../src/callbacks/types.js'
import { waitFor } from '../support/wait.js'

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** Answers one request; `n` counts requests from 1. Leave `res` alone to hang. */
export type Handler = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void

export interface Receiver {
  readonly url: string
  readonly received: Received[]
  close(): Promise<void>
}

export async function receiver(handler: Handler): Promise<Receiver> {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      received.push({ path: req.url ?? '', headers: req.headers, body })
      handler(req, res, body, received.length)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/cb`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

export const ok200: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.end('ok')
}

export const status =
  (code: number, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(code, headers)
    res.end(`status ${code}`)
  }

export interface LogLine {
  readonly level: number
  readonly msg: string
  readonly [k: string]: unknown
}

export function captureLogs(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as LogLine)
      cb()
    },
  })
  return { logger: createLogger('debug', sink), lines }
}

export const ERROR = 50
export const WARN = 40

export const fastSettings = (over: Partial<CallbackSettings> = {}): CallbackSettings => ({
  timeout_ms: 2000,
  give_up_after_ms: 60_000,
  backoff_initial_ms: 10,
  backoff_max_ms: 40,
  concurrency_per_domain: 4,
  // The test receivers listen on 127.0.0.1, which the address guard refuses unless allowed.
  allow: ['127.0.0.1/32'],
  ...over,
})

/**
 * A wall clock that jumps 10 s per attempt the receiver got, so that "give up after n attempts"
 * is a time rule (give_up_after_ms) that tests can state without waiting: with
 * `give_up_after_ms: giveUpAfter(n)` the n-th failed attempt is the last (real time may add up
 * to 5 s, plenty on a loaded machine).
 */
export const attemptClock = (received: { readonly length: number }): (() => number) => () => Date.now() + received.length * 10_000
export const giveUpAfter = (attempts: number): number => attempts * 10_000 - 5000

/** Polls until `cond` holds (test/support/wait.ts); fails after `ms` so a broken rule fails instead of hanging. */
export const until = (cond: () => boolean, what: string, ms = 4000): Promise<void> => waitFor(what, cond, ms, 5)


export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
