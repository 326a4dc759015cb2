/**
 * WebSocket clients in a process of their own (the fan-out and soak benchmarks): CTI ticket
 * subscribers of the daemon, or plain clients of the bare broadcast server (ws-broadcast.ts).
 * They read and count every message (a browser would parse it; this process is not measured, so
 * counting is all it must do) and keep the first client's messages, which the bare server then
 * broadcasts: the same frames to the same number of clients.
 */
import { request } from 'node:http'
import WebSocket from 'ws'
import { ready, serve } from './rpc.js'

const clients: WebSocket[] = []
let messages = 0
/** Messages per client since the last reset (by index in `clients`). */
let perClient: number[] = []
let captured: string[] = []
let capturing = false
const MAX_CAPTURED = 20_000

function post(url: URL, auth: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Opens one client; resolves once its first message (CTI: initial_info) or, bare, its open arrived. */
function open(url: string, first: 'message' | 'open'): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const index = clients.length
    clients.push(ws)
    let seen = false
    ws.on('message', (data: Buffer) => {
      if (!seen && first === 'message') {
        seen = true
        return resolve(ws)
      }
      messages++
      perClient[index] = (perClient[index] ?? 0) + 1
      if (capturing && index === 0 && captured.length < MAX_CAPTURED) captured.push(data.toString('utf8'))
    })
    ws.once('open', () => {
      if (first === 'open') resolve(ws)
    })
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`ws upgrade refused: ${String(res.statusCode)}`)))
  })
}

/** Runs `work(i)` for i in [from, to), `width` at a time. */
async function inBatches(from: number, to: number, width: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = from
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < to) await work(next++)
  }))
}

serve(
  {
    /** CTI: one ticket per subscriber (full_events, read_only, app_name fan<i>), up to `total` subscribers. */
    cti: async (m) => {
      const base = new URL(String(m.baseUrl))
      const auth = String(m.auth)
      const prefix = String(m.prefix ?? '/api')
      await inBatches(clients.length, Number(m.total), 16, async (i) => {
        const uri = `${prefix}/ws_cti?app_name=fan${i}&full_events=true&read_only=true`
        const r = await post(new URL(`${prefix}/gen_ws_ticket`, base), auth, JSON.stringify({ uri }))
        if (r.status !== 200) throw new Error(`gen_ws_ticket ${r.status}: ${r.text}`)
        const { ticket } = JSON.parse(r.text) as { ticket: string }
        await open(`ws://${base.host}${uri}&ticket=${ticket}`, 'message')
      })
      return clients.length
    },
    /** Plain clients of `url`, up to `total`. */
    bare: async (m) => {
      await inBatches(clients.length, Number(m.total), 16, async () => {
        await open(String(m.url), 'open')
      })
      return clients.length
    },
    /** Messages received since the last reset (initial_info not counted; in all, and the fewest and most of one client), and the clients still open. */
    counts: () => {
      const each = clients.map((_c, i) => perClient[i] ?? 0)
      return { messages, open: clients.filter((c) => c.readyState === WebSocket.OPEN).length, min: Math.min(...each), max: Math.max(...each) }
    },
    reset: (m) => {
      messages = 0
      perClient = []
      capturing = m.capture === true
      if (capturing) captured = []
    },
    captured: () => captured,
    closeAll: async () => {
      await Promise.all(clients.map((c) => new Promise<void>((r) => {
        if (c.readyState === WebSocket.CLOSED) return r()
        c.once('close', () => r())
        c.close()
      })))
      clients.length = 0
    },
  },
  () => {
    for (const c of clients) c.terminate()
  },
)
await ready({})
