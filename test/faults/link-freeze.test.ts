/**
 * "An error reply means no call" and "link loss seen within 1 s", with FreeSWITCH frozen as under
 * SIGSTOP: a TCP proxy between the daemon and the simulator stops reading and writing in both
 * directions (what the daemon sees of a stopped process: an open socket, no byte), then resumes,
 * and the switch reads and runs whatever had been written meanwhile. An independent ESL client,
 * connected to the simulator directly, records the request id of every channel created.
 * (test/faults/link.test.ts freezes a simulator process with SIGSTOP; this one is in-process,
 * deterministic, and also checks the replies' timing and the fate of a command caught mid-way.)
 */
import net from 'node:net'
import t, { type Test } from 'tap'
import { Simulator } from '../../src/sim/index.js'
import { createLogger } from '../../src/util/logger.js'
import { lagMeter } from '../support/link-lag.js'
import { LogCapture, TIME_SCALE, TOKENS, basic, fixtureCopy, receiver, sleep, waitFor } from './harness/in-process.js'
import { startTestDaemon } from '../support/daemon.js'

/** Forwards TCP to `target`; freeze() stops reading both ways (bytes wait in the kernel), thaw() resumes. */
class FreezableProxy {
  private readonly pairs = new Set<{ a: net.Socket; b: net.Socket }>()
  private frozen = false
  private readonly server = net.createServer((a) => {
    const b = net.connect(this.target, '127.0.0.1')
    const pair = { a, b }
    this.pairs.add(pair)
    const end = () => {
      a.destroy()
      b.destroy()
      this.pairs.delete(pair)
    }
    a.on('error', end).on('close', end)
    b.on('error', end).on('close', end)
    if (!this.frozen) this.flow(pair)
    else {
      a.pause()
      b.pause()
    }
  })
  port = 0

  constructor(private readonly target: number) {}

  private flow(p: { a: net.Socket; b: net.Socket }) {
    p.a.pipe(p.b)
    p.b.pipe(p.a)
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()))
    this.port = (this.server.address() as net.AddressInfo).port
  }

  freeze(): void {
    this.frozen = true
    for (const { a, b } of this.pairs) {
      a.unpipe(b)
      b.unpipe(a)
      a.pause()
      b.pause()
    }
  }

  thaw(): void {
    this.frozen = false
    for (const p of this.pairs) this.flow(p)
  }

  async close(): Promise<void> {
    for (const { a, b } of this.pairs) {
      a.destroy()
      b.destroy()
    }
    await new Promise<void>((r) => this.server.close(() => r()))
  }
}

/** An independent event socket client: the request id of every channel the switch created. */
async function observe(t: Test, port: number): Promise<{ rung: Set<string>; channels: () => number }> {
  const sock = net.connect(port, '127.0.0.1')
  t.teardown(() => sock.destroy())
  let text = ''
  let subscribed = false
  const rung = new Set<string>()
  let channels = 0
  sock.on('data', (d: Buffer) => {
    text += d.toString('utf8')
    if (!subscribed && text.includes('auth/request')) {
      subscribed = true
      sock.write('auth ClueCon\n\nevent json CHANNEL_CREATE\n\n')
    }
    for (;;) {
      const m = /"Event-Name":"CHANNEL_CREATE"[^]*?\}/.exec(text)
      if (m === null) break
      channels += 1
      const id = /"variable_cod_request_id":"([^"]+)"/.exec(m[0])?.[1]
      if (id !== undefined) rung.add(id)
      text = text.slice(m.index + m[0].length)
    }
  })
  await waitFor('observer subscribed', () => subscribed)
  await sleep(50)
  return { rung, channels: () => channels }
}

interface Sent {
  readonly status: number
  readonly requestId: string
  readonly errorId: string | undefined
  readonly sentAt: number
  readonly ms: number
}

t.test('FreeSWITCH frozen: 503 within 1 s, error replies at once and never rung; what was written is placed and reported', async (t) => {
  t.setTimeout(60000)
  const cb = await receiver(t)
  const simPort = await new Promise<number>((resolve) => {
    const s = net.createServer()
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port
      s.close(() => resolve(p))
    })
  })
  const proxy = new FreezableProxy(simPort)
  await proxy.listen()
  t.teardown(() => proxy.close())
  const { configFile } = fixtureCopy(t, {
    daemon: (d) => {
      const fs = d.freeswitch as Record<string, unknown>
      fs.mode = 'freeswitch'
      fs.port = proxy.port
    },
    // This test is about the link: a limit high enough that the load never meets it, so every
    // refusal it sees is the link's (the limit's own burst test is test/faults/limit.test.ts).
    domains: { 'fault.test': (d) => void (d.channel_limit = 1000) },
  })
  const logs = new LogCapture()
  // Its FreeSWITCH (the simulator behind the proxy) starts below: no link to wait for yet.
  const daemon = await startTestDaemon(t, { configFile, logger: createLogger('info', logs.stream), waitLink: false })
  const cfg = daemon.store.current().config
  const sim = new Simulator({
    domains: cfg.domains,
    password: 'ClueCon',
    xmlCurl: { url: daemon.xmlCurlUrl, username: cfg.daemon.xml_curl.username, password: cfg.daemon.xml_curl.password },
    timeScale: TIME_SCALE,
  })
  await sim.listen(simPort)
  t.teardown(() => sim.close())
  const observer = await observe(t, simPort)
  const healthz = async () => (await fetch(`${daemon.baseUrl}/healthz`)).status
  await waitFor('link up', async () => (await healthz()) === 200, 10000)

  const sent: Sent[] = []
  let loading = true
  const worker = async () => {
    while (loading) {
      const sentAt = Date.now()
      const res = await fetch(`${daemon.baseUrl}/api/call_user`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic('fault.test', TOKENS['fault.test'] ?? '') },
        body: JSON.stringify({ user_name: 'quick', destination: '0311112222', callback_url: cb.url }),
      })
      const json = (await res.json()) as { error?: { id: string } }
      sent.push({ status: res.status, requestId: res.headers.get('x-request-id') ?? '', errorId: json.error?.id, sentAt, ms: Date.now() - sentAt })
      await sleep(10)
    }
  }
  const workers = [worker(), worker(), worker(), worker()]
  await sleep(600)

  proxy.freeze()
  const frozenAt = Date.now()
  // The promise is 1 s of the daemon's responsive time: time this process (daemon and test alike)
  // could not run, on a machine shared with other work, is measured and set apart.
  const lag = lagMeter()
  await waitFor('/healthz 503', async () => (await healthz()) === 503, 5000, 10)
  const msTo503 = Date.now() - frozenAt
  const blockedMs = lag.stop()
  await sleep(3000 - msTo503)
  proxy.thaw()
  const thawedAt = Date.now()
  await waitFor('/healthz 200 again', async () => (await healthz()) === 200, 5000, 20)
  await sleep(600)
  loading = false
  await Promise.all(workers)

  const ok = sent.filter((s) => s.status === 200)
  const refused = sent.filter((s) => s.status !== 200)
  // Sent once the link was judged quiet, answered before the thaw: refused at once.
  const whileQuiet = refused.filter((s) => s.sentAt >= frozenAt + msTo503 && s.sentAt + s.ms < thawedAt)
  await waitFor('every placed request reported', () => ok.every((s) => cb.deliveries.some((d) => d.headers['x-request-id'] === s.requestId)), 15000, 50)
  await sleep(300) // the switch may still be creating what it read after the thaw
  const errorRung = refused.filter((s) => observer.rung.has(s.requestId))
  const writtenWhenFrozen = ok.filter((s) => s.sentAt < frozenAt + msTo503 && s.sentAt + s.ms > frozenAt + msTo503)

  t.ok(msTo503 - blockedMs < 1000, `/healthz 503 within 1 s of the freeze (${msTo503} ms, of which ${blockedMs} ms this process could not run)`)
  t.ok(refused.length > 0 && ok.length > 0, 'the load saw both placed and refused requests')
  t.same(
    [...new Set(refused.map((s) => `${s.status} ${s.errorId ?? ''}`))],
    ['503 pbx_unavailable'],
    'every refusal is 503 pbx_unavailable',
  )
  // At once: nothing awaited, well under the 2 s command timeout an originate may wait (a loaded
  // machine still takes some time for the HTTP round trip itself).
  t.ok(
    whileQuiet.every((s) => s.ms < 1000),
    `refused at once while quiet (slowest ${Math.max(0, ...whileQuiet.map((s) => s.ms))} ms of ${whileQuiet.length})`,
  )
  t.same(errorRung.map((s) => s.requestId), [], `0 error-answered requests rung (of ${refused.length})`)
  t.ok(
    ok.every((s) => cb.deliveries.some((d) => d.headers['x-request-id'] === s.requestId)),
    `every placed request has its result (${ok.length}, ${writtenWhenFrozen.length} of them written when FreeSWITCH froze)`,
  )
  const resultOf = (s: Sent) => cb.deliveries.find((d) => d.headers['x-request-id'] === s.requestId)?.body
  t.comment(
    `figures: ${JSON.stringify({
      requests: sent.length,
      placed: ok.length,
      refused: refused.length,
      refusedWhileQuiet: whileQuiet.length,
      msTo503,
      blockedMs,
      writtenWhenFrozen: writtenWhenFrozen.map((s) => ({ replyMs: s.ms, result: resultOf(s) })),
      channelsSeen: observer.channels(),
    })}`,
  )
})
