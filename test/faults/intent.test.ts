/**
 * The crash window between FreeSWITCH accepting an originate and the journal's `accepted` record
 * (journal/types.ts OriginateIntent, docs/callbacks.md "Durability"): the daemon is a child
 * process, the simulator another, and between them a relay of the test's own that sees each
 * command. When the daemon writes its originate, the relay either passes it on and withholds the
 * switch's `+OK Job-UUID` (the call is placed; the daemon never learns it was accepted), or
 * withholds the originate itself (nothing is placed); then the daemon is SIGKILLed, so its client
 * never gets a reply. A new daemon on the same journal must:
 *
 * - placed: deliver the call's result to callback_url, and answer the client's retry with the
 *   same Idempotency-Key with the 200 it would have had (same UUID, `Idempotent-Replayed`),
 *   without a second originate;
 * - not placed: answer the retry by placing the call (one originate, a fresh 200).
 */
import net from 'node:net'
import t, { type Test } from 'tap'
import { faultStack, freePort, waitFor, DOMAIN, TOKEN, TIME_SCALE, type FaultStack } from './harness/stack.js'
import { spawnTsx, type ManagedProcess } from './harness/procs.js'
import { faultyReceiver, type FaultyReceiver } from './harness/receiver.js'

t.setTimeout(120_000)

type Mode = 'pass' | 'withhold-acceptance' | 'withhold-originate'

/** Relays the daemon's ESL connection to the simulator, and can withhold an originate or its acceptance. */
class EslRelay {
  mode: Mode = 'pass'
  /** The origination_uuid of every originate the daemon wrote (withheld ones included). */
  readonly originates: string[] = []
  /** Set once an originate was withheld or its acceptance held back. */
  tripped = false
  private readonly sockets = new Set<net.Socket>()
  private readonly server: net.Server

  constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target, '127.0.0.1')
      let holdReplies = false
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => undefined)
      }
      client.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1')
        const originate = /bgapi originate[^\n]*?origination_uuid=([0-9a-f-]{36})/.exec(text)
        if (originate?.[1] !== undefined) {
          this.originates.push(originate[1])
          if (this.mode === 'withhold-originate') {
            this.tripped = true
            return
          }
          if (this.mode === 'withhold-acceptance') {
            this.tripped = true
            holdReplies = true
          }
        }
        upstream.write(chunk)
      })
      upstream.on('data', (chunk: Buffer) => {
        if (!holdReplies) client.write(chunk)
      })
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', () => r()))
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    return new Promise((r) => this.server.close(() => r()))
  }
}

interface Rig {
  readonly stack: FaultStack
  readonly relay: EslRelay
  readonly rx: FaultyReceiver
}

async function rig(t: Test): Promise<Rig> {
  const stack = await faultStack(t, { callbacks: { backoff_initial_ms: 50, backoff_max_ms: 200 } })
  const rx = await faultyReceiver(t)
  // The simulator on a port of its own; the daemon's freeswitch.port is the relay's.
  const simPort = await freePort()
  const sim: ManagedProcess = spawnTsx(t, 'simulator', 'src/sim/main.ts', ['--config', stack.configFile, '--time-scale', String(TIME_SCALE), '--port', String(simPort)])
  await sim.waitLog('simulator listening')
  const relay = new EslRelay(simPort)
  await relay.listen(stack.eslPort)
  t.teardown(() => relay.close())
  return { stack, relay, rx }
}

const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`

/** POST call_external with an Idempotency-Key; status 0 when the connection died first. */
async function callWithKey(stack: FaultStack, key: string, body: unknown): Promise<{ status: number; replayed: boolean; uuids: string[] }> {
  try {
    const res = await fetch(`${stack.baseUrl}/api/call_external`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    })
    const json = (await res.json()) as { uuids?: string[] }
    return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', uuids: json.uuids ?? [] }
  } catch {
    return { status: 0, replayed: false, uuids: [] }
  }
}

/** Starts a daemon, has it write one originate, trips the relay and SIGKILLs it before any reply. */
async function crashInWindow(t: Test, r: Rig, mode: Mode, key: string, body: unknown): Promise<void> {
  const first = await r.stack.startDaemon()
  r.relay.mode = mode
  const reply = callWithKey(r.stack, key, body)
  await waitFor('the originate written', () => r.relay.tripped, 15_000)
  // The journal's intent is durable before the originate is written: nothing more is needed for it.
  await first.kill()
  t.equal((await reply).status, 0, 'the client got no reply')
  r.relay.mode = 'pass'
  r.relay.tripped = false
}

t.test('placed before the crash: its result is delivered and the retry gets the 200 it would have had', async (t) => {
  const r = await rig(t)
  const body = { target: '0312340001', destination: 'callee', callback_url: r.rx.url }
  await crashInWindow(t, r, 'withhold-acceptance', 'intent-placed-1', body)
  t.equal(r.relay.originates.length, 1)
  const uuid = r.relay.originates[0] ?? ''

  await r.stack.startDaemon()
  const results = () => r.rx.received.filter((x) => x.status >= 200 && x.status < 300 && (JSON.parse(x.body) as { uuid?: string }).uuid === uuid)
  await waitFor('the result of the call placed before the crash', () => results().length > 0, 30_000)
  t.same(JSON.parse(results()[0]?.body ?? '{}'), { result_code: 0, uuid }, 'answered, with the leg FreeSWITCH created')

  const retry = await callWithKey(r.stack, 'intent-placed-1', body)
  t.equal(retry.status, 200)
  t.ok(retry.replayed, 'Idempotent-Replayed: true')
  t.same(retry.uuids, [uuid], 'the UUID of the call placed before the crash')
  t.equal(r.relay.originates.length, 1, 'no second originate')
  await new Promise((res) => setTimeout(res, 500))
  t.equal(results().length, 1, 'one result')
})

t.test('not placed before the crash: the retry places the call', async (t) => {
  const r = await rig(t)
  const body = { target: '0312340002', destination: 'callee', callback_url: r.rx.url }
  await crashInWindow(t, r, 'withhold-originate', 'intent-unplaced-1', body)
  t.equal(r.relay.originates.length, 1, 'one originate written (and withheld)')

  const second = await r.stack.startDaemon()
  await waitFor('recovery done', () => second.lines.some((l) => l.msg === 'recovery done'), 20_000)
  const summary = second.lines.find((l) => l.msg === 'recovery done')
  t.match(summary, { intentsPlaced: 0, intentsUnplaced: 1 }, 'recovery found nothing of it')
  const retry = await callWithKey(r.stack, 'intent-unplaced-1', body)
  t.equal(retry.status, 200)
  t.notOk(retry.replayed, 'a fresh reply')
  t.equal(retry.uuids.length, 1)
  t.equal(r.relay.originates.length, 2, 'one originate more: the retry')
  t.not(retry.uuids[0], r.relay.originates[0], 'under a new UUID')
  await waitFor('its result', () => r.rx.received.some((x) => x.status === 204 && (JSON.parse(x.body) as { uuid?: string }).uuid === retry.uuids[0]), 30_000)
})
