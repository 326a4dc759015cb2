/**
 * A callback receiver that fails a share of the attempts (the soak benchmark: 10 %): every
 * `failEvery`-th attempt is answered 503, the others 204. It keeps, per request (X-Request-Id),
 * how many attempts were answered 2xx, so that the parent can tell lost results (a request it
 * got a 200 for and no result acknowledged here) from duplicates (more than one acknowledged).
 * Notices (X-Cod-Notice) are not results and are only counted.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { num, ready, serve } from './rpc.js'

const failEvery = num('failEvery', 10)
let attempts = 0
let failed = 0
let notices = 0
/** Request id -> result attempts answered 2xx. */
const acked = new Map<string, number>()
const server = createServer((req, res) => {
  req.on('data', () => {})
  req.on('end', () => {
    attempts++
    if (attempts % failEvery === 0) {
      failed++
      res.writeHead(503).end()
      return
    }
    res.writeHead(204).end()
    if (req.headers['x-cod-notice'] !== undefined) {
      notices++
      return
    }
    const id = String(req.headers['x-request-id'] ?? '')
    acked.set(id, (acked.get(id) ?? 0) + 1)
  })
})
server.keepAliveTimeout = 60_000
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
serve(
  {
    stats: () => {
      let duplicates = 0
      for (const n of acked.values()) if (n > 1) duplicates++
      return { attempts, failed, notices, results: acked.size, duplicates }
    },
    /** Of these request ids (each got a 200), those whose result was never acknowledged here. */
    missing: (m) => (m.ids as string[]).filter((id) => !acked.has(id)),
  },
  () =>
    new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    }),
)
await ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/result` })
