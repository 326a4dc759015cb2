/**
 * Waiting for a free channel end to end on the simulator (issue 31 item 2): a burst of 100
 * two-channel calls (call_external to a number that talks briefly, connected to bob) at a domain
 * limit of 10 such calls (channel_limit 20). Every request with wait_ms ends 200 or 429 after its
 * wait, the live channels never exceed the limit, and every admitted call is placed (its result
 * callback comes); a request that may not wait long enough is refused with nothing placed; a
 * client that goes away while waiting takes its request with it; an Idempotency-Key replay made
 * during the wait gets the first request's reply and places nothing; bad values are refused.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`

t.test('a burst waits for its channels, first come first served, never above the limit', async (t) => {
  t.setTimeout(120_000)
  const results = new Map<string, unknown>()
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      results.set(String(req.headers['x-request-id']), JSON.parse(body))
      res.end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`

  // The shipped configuration; a number that answers and talks briefly (simulated seconds x0.05).
  const dir = mkdtempSync(join(tmpdir(), 'cod-wait-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync('conf/daemon.yaml', join(dir, 'daemon.yaml'))
  mkdirSync(join(dir, 'domains'))
  const domain = readFileSync('conf/domains/example.test.yaml', 'utf8')
    .replace('    default: { answer_after: 1 }\n', '    default: { answer_after: 1 }\n    "0355550000": { answer_after: 1, hangup_after: 4 }\n')
    .replace('channel_limit: 20', 'channel_limit: 20\nlimits: { max_wait_ms: 20000, max_waiting: 200 }')
  writeFileSync(join(dir, 'domains', 'example.test.yaml'), domain)
  const daemon = await startTestDaemon(t, { configFile: join(dir, 'daemon.yaml'), simulatorPort: 0, simulatorTimeScale: 0.05 })
  const sim = daemon.simulator
  if (sim === undefined) return t.fail('simulator mode')

  let peak = 0
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, sim.liveChannels().length)
      await new Promise((r) => setImmediate(r))
    }
  })()

  const post = async (body: unknown, signal?: AbortSignal, key?: string) => {
    const res = await fetch(`${daemon.baseUrl}/api/call_external`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json', ...(key !== undefined ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify(body),
      ...(signal !== undefined ? { signal } : {}),
    })
    return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', body: (await res.json()) as { uuids?: string[]; error?: { id: string; description: string } } }
  }
  const call = { target: '0355550000', destination: 'bob', callback_url: callbackUrl }

  const started = Date.now()
  const burst = await Promise.all(Array.from({ length: 100 }, () => post({ ...call, wait_ms: 20000 })))
  const ms = Date.now() - started
  sampling = false
  await sampler
  const ok = burst.filter((r) => r.status === 200)
  const refused = burst.filter((r) => r.status !== 200)
  t.same(new Set(refused.map((r) => r.status)), refused.length === 0 ? new Set() : new Set([429]), 'every request ends 200 or 429')
  t.ok(ok.length >= 90, `nearly all were placed after waiting (${ok.length} of 100 in ${ms} ms)`)
  t.ok(peak <= 20, `the live channels never exceeded the limit (peak ${peak} of 20)`)
  await waitFor('a result for every placed call', () => ok.every((r) => results.has(r.requestId)), 30_000)
  t.equal(results.size, ok.length, 'every admitted call was placed, and nothing else')
  const scrape = await (await fetch(`${daemon.baseUrl}/metrics`)).text()
  const value = (series: string): number => Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(scrape)?.[1] ?? NaN)
  t.ok(value('cod_channel_waits_total{outcome="taken"}') >= 1, `the waits that were placed are counted (${value('cod_channel_waits_total{outcome="taken"}')})`)
  t.ok(value('cod_channel_wait_seconds_total') > 0, 'and the time they waited')
  t.equal(value('cod_requests_waiting{domain="example.test"}'), 0, 'nobody waits any more')

  await t.test('a request that may not wait long enough is refused after its wait, nothing placed', async (t) => {
    // Ten calls fill the domain for a while (bob's leg and a number that talks 4 s = 200 ms here;
    // one that never hangs up keeps them: the default number answers and stays).
    const long = { target: '0399990000', destination: 'bob' }
    const holders = await Promise.all(Array.from({ length: 10 }, () => post({ ...long, wait_ms: 5000 })))
    t.same(holders.map((r) => r.status), Array(10).fill(200), 'ten calls hold the 20 channels')
    const before = sim.liveChannels().length
    const t0 = Date.now()
    const late = await post({ ...call, wait_ms: 300 })
    t.equal(late.status, 429)
    t.match(late.body.error, { id: 'channel_limit_reached', description: /after waiting 300 ms/ })
    t.ok(Date.now() - t0 >= 290, 'answered after its wait')
    t.notOk(sim.liveChannels().some((c) => c.variables['cod_request_id'] === late.requestId), 'nothing of it placed')
    t.ok(sim.liveChannels().length <= 20 && before <= 20, 'the domain stays at its limit')
    const noWait = await post({ ...call })
    t.equal(noWait.status, 429, 'without wait_ms: refused at once, as before')

    // A client that goes away while it waits: its request leaves the line, nothing is placed.
    const gone = new AbortController()
    const abandoned = post({ ...call, wait_ms: 20000 }, gone.signal).catch(() => 'aborted')
    await new Promise((r) => setTimeout(r, 300))
    gone.abort()
    t.equal(await abandoned, 'aborted')
    // The channels free: had it stayed in the line, its call would be placed now.
    await new Promise((r) => setTimeout(r, 100))
    for (const c of sim.liveChannels()) sim.remoteHangup(c.uuid)
    await waitFor('the domain empty again', () => sim.liveChannels().length === 0, 10_000)
    await new Promise((r) => setTimeout(r, 500))
    t.equal(sim.liveChannels().length, 0, 'the request whose client went away was never placed')
  })

  await t.test('an Idempotency-Key replay during the wait waits for the same outcome: one call', async (t) => {
    const long = { target: '0399990000', destination: 'bob' }
    const holders = await Promise.all(Array.from({ length: 10 }, () => post({ ...long, wait_ms: 5000 })))
    t.same(holders.map((r) => r.status), Array(10).fill(200), 'ten calls hold the 20 channels')
    const body = { ...call, wait_ms: 10000 }
    const first = post(body, undefined, 'replayed-while-waiting')
    await new Promise((r) => setTimeout(r, 200))
    const replay = post(body, undefined, 'replayed-while-waiting')
    await new Promise((r) => setTimeout(r, 200))
    // Room for one call: the first in line is placed, and its replay answers with it.
    for (const c of sim.liveChannels().filter((x) => x.variables['cod_request_id'] === holders[0]?.requestId)) sim.remoteHangup(c.uuid)
    const [a, b] = await Promise.all([first, replay])
    t.equal(a.status, 200, JSON.stringify(a.body))
    t.same(b.body, a.body, 'the replay got the same reply, the same UUIDs')
    const uuids = a.body.uuids ?? []
    await waitFor('its result', () => results.has(a.requestId), 10_000)
    t.equal([...results.keys()].filter((id) => id === b.requestId || id === a.requestId).length, 1, 'one request placed, one result')
    t.equal(uuids.length, 1, 'one originating leg')
    for (const c of sim.liveChannels()) sim.remoteHangup(c.uuid)
    await waitFor('the domain empty again', () => sim.liveChannels().length === 0, 10_000)
  })

  await t.test('bad wait_ms values are refused', async (t) => {
    for (const wait_ms of [-1, 30001, 1.5, 'soon', '', true]) {
      const r = await post({ ...call, wait_ms })
      t.equal(r.status, 400, JSON.stringify(wait_ms))
      t.equal(r.body.error?.id, 'invalid_parameter')
    }
    const over = await post({ ...call, wait_ms: 25000 })
    t.equal(over.status, 400)
    t.match(over.body.error?.description, /at most 20000 ms, the domain's limits\.max_wait_ms/)
  })
})
