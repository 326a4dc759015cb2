/**
 * The application's callback receiver, as badly as it can behave: it accepts (204), fails (503),
 * hangs (reads the request and never answers) or vanishes (closes its port: connection
 * refused), and comes back on the same port. Every request is recorded with its request id,
 * delivery id and exact body, so the suite can tell a lost result from a repeated one.
 */
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Test } from 'tap'

export type ReceiverMode = 'accept' | 'fail503' | 'hang'

export interface Received {
  readonly at: number
  readonly requestId: string
  readonly deliveryId: string
  readonly body: string
  /** What the receiver answered; 0 when it never did (hang). */
  status: number
}

export class FaultyReceiver {
  readonly received: Received[] = []
  mode: ReceiverMode = 'accept'
  port = 0
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly hanging = new Set<ServerResponse>()

  get url(): string {
    return `http://127.0.0.1:${this.port}/result`
  }

  get listening(): boolean {
    return this.server !== undefined
  }

  /** Request ids whose result was accepted (answered 2xx) at least once. */
  acceptedRequestIds(): Set<string> {
    return new Set(this.received.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.requestId))
  }

  async open(): Promise<void> {
    if (this.server !== undefined) return
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const r: Received = {
          at: Date.now(),
          requestId: String(req.headers['x-request-id'] ?? ''),
          deliveryId: String(req.headers['x-delivery-id'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          status: 0,
        }
        this.received.push(r)
        if (this.mode === 'hang') {
          this.hanging.add(res)
          res.on('close', () => this.hanging.delete(res))
          return
        }
        r.status = this.mode === 'accept' ? 204 : 503
        res.writeHead(r.status).end()
      })
    })
    server.on('connection', (s: Socket) => {
      this.sockets.add(s)
      s.on('close', () => this.sockets.delete(s))
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as AddressInfo).port
    this.server = server
  }

  /** Vanishes: stops listening and drops every connection (clients get "connection refused"). */
  async close(): Promise<void> {
    const server = this.server
    this.server = undefined
    if (server === undefined) return
    const closed = new Promise<void>((r) => server.close(() => r()))
    for (const s of this.sockets) s.destroy()
    await closed
  }
}

export async function faultyReceiver(t: Test, mode: ReceiverMode = 'accept'): Promise<FaultyReceiver> {
  const r = new FaultyReceiver()
  r.mode = mode
  await r.open()
  t.teardown(() => r.close())
  return r
}
