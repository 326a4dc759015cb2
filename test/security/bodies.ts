/**
 * Oversize and slow requests over raw sockets (what an HTTP client library would not send):
 * bodies over `http.body_limit` (declared, chunked, lying lengths), huge headers, and slowloris:
 * a body or headers trickled byte by byte, alone and many at once, which the listener must cut
 * within `http.request_timeout_ms` (src/daemon.ts newServer: 408, then the socket is closed)
 * while it goes on answering everyone else.
 */
import net from 'node:net'
import { AUTH_ALPHA, BODY_LIMIT, REQUEST_TIMEOUT_MS, type World } from './world.js'

/** Sends raw bytes and collects the reply until the server closes (or `waitMs` passes). */
function raw(base: string, chunks: readonly Buffer[], opts: { gapMs?: number; waitMs?: number; untilReply?: boolean } = {}): Promise<{ reply: string; closedBy: 'server' | 'us'; ms: number }> {
  const u = new URL(base)
  const start = Date.now()
  return new Promise((resolve) => {
    let reply = ''
    let done = false
    let timer: NodeJS.Timeout | undefined
    const s = net.connect(Number(u.port), u.hostname)
    const finish = (closedBy: 'server' | 'us') => {
      if (done) return
      done = true
      clearTimeout(timer)
      s.destroy()
      resolve({ reply, closedBy, ms: Date.now() - start })
    }
    s.on('data', (c: Buffer) => {
      reply += c.toString('latin1')
      // A reply's head is all a case judges; a connection kept alive after it is not waited for.
      if (opts.untilReply === true && reply.includes('\r\n\r\n')) finish('server')
    })
    s.on('close', () => finish('server'))
    s.on('error', () => finish('server'))
    const guard = setTimeout(() => finish('us'), opts.waitMs ?? 15000)
    guard.unref()
    s.on('connect', () => {
      let i = 0
      const next = () => {
        if (done || i >= chunks.length) return
        if (s.writable) s.write(chunks[i++] as Buffer)
        timer = setTimeout(next, opts.gapMs ?? 0)
      }
      next()
    })
  })
}

const head = (path: string, headers: Record<string, string>): string =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`

const statusOf = (reply: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)

export async function oversize(w: World, base = w.api, path = '/api/call_user', auth = AUTH_ALPHA): Promise<string[]> {
  const problems: string[] = []
  const family = `oversize (${path})`
  const big = Buffer.alloc(BODY_LIMIT + 1024, 0x61)
  const json = Buffer.from(`{"user_name":"${'a'.repeat(BODY_LIMIT + 10)}"}`)
  const cases: Array<[string, Buffer[], (status: number) => boolean]> = [
    ['declared length over the limit', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': String(json.length) })), json], (s) => s === 413],
    ['declared length over the limit, body never sent', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': String(10 * BODY_LIMIT) }))], (s) => s === 413 || s === 408],
    ['chunked over the limit', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' })), Buffer.from(`${big.length.toString(16)}\r\n`), big, Buffer.from('\r\n0\r\n\r\n')], (s) => s === 413],
    // Either refused at once or cut by the request timeout: bounded both ways.
    ['a length of 2^53', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': '9007199254740993' }))], (s) => s === 413 || s === 400 || s === 408],
    ['two lengths', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': '2', 'Content-Length': '3' })), Buffer.from('{}')], (s) => s === 400],
    ['length and chunked', [Buffer.from(head(path, { authorization: auth, 'content-length': '4', 'transfer-encoding': 'chunked' })), Buffer.from('0\r\n\r\n')], (s) => s === 400],
    ['a header of 20 KB', [Buffer.from(head(path, { authorization: auth, 'x-big': 'b'.repeat(20000) }))], (s) => s === 431 || s === 400],
    ['2,000 headers', [Buffer.from(head(path, { authorization: auth, ...Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`x-h${i}`, 'v'])) }))], (s) => s === 431 || s === 400 || s === 415],
    ['a 10 KB path', [Buffer.from(`GET /api/${'p'.repeat(10000)} HTTP/1.1\r\nHost: x\r\n\r\n`)], (s) => s === 404 || s === 414 || s === 431 || s === 400],
    ['a bad chunk size', [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' })), Buffer.from('zz\r\n{}\r\n0\r\n\r\n')], (s) => s === 400],
  ]
  for (const [name, chunks, ok] of cases) {
    const r = await raw(base, chunks, { untilReply: true, waitMs: REQUEST_TIMEOUT_MS + 8000 })
    const status = statusOf(r.reply)
    w.tally.count(family, status === 0 ? 'closed without a reply' : String(status))
    if (!ok(status)) problems.push(`${name}: ${status} ${r.reply.slice(0, 120)}`)
  }
  return problems
}

/**
 * Slowloris: a body trickled one byte every 250 ms, headers trickled likewise, and `crowdSize`
 * trickled bodies at once; each must be cut (408, or closed) by the request timeout, and meanwhile a
 * normal request is answered. The bound checked is generous (timeout + 8 s): it proves that a
 * bound exists, not how fast it is.
 */
export async function slowloris(w: World, base = w.api, path = '/api/call_user', auth = AUTH_ALPHA, crowdSize = 50): Promise<string[]> {
  const problems: string[] = []
  const family = `slow requests (${path})`
  const limitMs = REQUEST_TIMEOUT_MS + 8000
  const body = Buffer.from(JSON.stringify({ user_name: 'carol', destination: '0311112222', calling_name: 'x'.repeat(2000) }))
  const bytes = (b: Buffer) => [...b].map((x) => Buffer.from([x]))
  const trickledBody = () => raw(base, [Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': String(body.length) })), ...bytes(body)], { gapMs: 250, waitMs: limitMs + 2000 })
  const trickledHead = () => raw(base, bytes(Buffer.from(head(path, { authorization: auth, 'content-type': 'application/json', 'content-length': '2', 'x-pad': 'p'.repeat(400) }))), { gapMs: 250, waitMs: limitMs + 2000 })
  const crowd = Array.from({ length: crowdSize }, () => trickledBody())
  const alone = [trickledBody(), trickledHead()]
  // While they trickle, the listener answers others.
  await new Promise((r) => setTimeout(r, 500))
  const meanwhile = await fetch(`${base}/healthz`).then((r) => r.status).catch((e: unknown) => String(e))
  if (base === w.api && meanwhile !== 200) problems.push(`healthz during the slow requests: ${meanwhile}`)
  const results = await Promise.all([...alone, ...crowd])
  for (const [i, r] of results.entries()) {
    const status = statusOf(r.reply)
    w.tally.count(family, r.closedBy === 'server' ? `cut by the server (${status === 0 ? 'closed' : status})` : 'NOT cut')
    if (r.closedBy !== 'server') problems.push(`slow request ${i} not cut in ${limitMs} ms`)
    else if (status !== 0 && status !== 408) problems.push(`slow request ${i}: ${status} ${r.reply.slice(0, 100)}`)
  }
  return problems
}
