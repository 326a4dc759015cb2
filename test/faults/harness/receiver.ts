/**
 * The application's callback receiver, as badly as it can behave: it accepts (204), fails (503),
 * hangs (reads the request and never answers) or vanishes (closes its port: connection
 * refused), and comes back on the same port. The receiver itself is test/faults/harness/in-process.ts's
 * CallbackReceiver (one implementation for both fault suites); this view reads each request as
 * its request id, delivery id and exact body, so the suite can tell a lost result from a
 * repeated one.
 */
import type { Test } from 'tap'
import { CallbackReceiver, type Mode } from './in-process.js'

export type ReceiverMode = Mode

export interface Received {
  readonly at: number
  readonly requestId: string
  readonly deliveryId: string
  readonly body: string
  /** What the receiver answered; 0 when it never did (hang). */
  readonly status: number
}

export class FaultyReceiver extends CallbackReceiver {
  /** Every request received so far, in order. */
  get received(): Received[] {
    return this.deliveries.map((d) => ({
      at: d.at,
      requestId: String(d.headers['x-request-id'] ?? ''),
      deliveryId: String(d.headers['x-delivery-id'] ?? ''),
      body: d.body,
      status: d.status,
    }))
  }

  /** Request ids whose result was accepted (answered 2xx) at least once. */
  acceptedRequestIds(): Set<string> {
    return new Set(this.received.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.requestId))
  }
}

export async function faultyReceiver(t: Test, mode: ReceiverMode = 'accept'): Promise<FaultyReceiver> {
  const r = new FaultyReceiver()
  r.mode = mode
  await r.open()
  t.teardown(() => r.close())
  return r
}
