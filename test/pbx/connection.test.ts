import t, { type Test } from 'tap'
import { connectPbx, SUBSCRIBED_EVENTS, type PbxConnection } from '../../src/pbx/connection.js'
import * as commands from '../../src/pbx/commands.js'
import type { EslCommand, FsEvent } from '../../src/pbx/types.js'
import { Simulator } from '../../src/sim/index.js'
import { silentLogger } from '../../src/util/logger.js'
import type { Result } from '../../src/util/result.js'
import { lagMeter } from '../support/link-lag.js'
import { waitFor } from '../support/wait.js'
import { startMiniEsl, type MiniEsl } from './mini-esl.js'

const cmd = <C extends EslCommand>(r: Result<C, commands.CommandError>): C => {
  if (!r.ok) throw new Error(r.error.reason)
  return r.value
}

const PROBE = 'event json BACKGROUND_JOB'

/**
 * Commands are written one at a time, in the order they were sent: once a command sent now is
 * answered, anything queued before it (a command wrongly kept, or written again on a new
 * socket) has reached the server already. What "nothing more was written" waits for.
 */
async function barrier(t: Test, pbx: PbxConnection): Promise<void> {
  t.same(await pbx.bgapi(cmd(commands.status())), { ok: true, value: '+OK\n' }, 'a later command answered: everything before it was written')
}

async function setup(t: Test, password = 'ClueCon', idleProbeMs = 50): Promise<{ esl: MiniEsl; pbx: PbxConnection }> {
  const esl = await startMiniEsl()
  const pbx = connectPbx({
    host: '127.0.0.1',
    port: esl.port,
    password,
    logger: silentLogger(),
    commandTimeoutMs: 1000,
    health: { idleProbeMs, quietAfterMs: 400 },
  })
  t.teardown(async () => {
    await pbx.close()
    await esl.close()
  })
  return { esl, pbx }
}

t.test('connects, authenticates, subscribes, reports up once per connection', async (t) => {
  const { esl, pbx } = await setup(t)
  let connected = 0
  pbx.onConnected(() => connected++)
  await waitFor('link up', () => pbx.isConnected())
  t.equal(esl.received[0], 'auth ClueCon')
  for (const name of SUBSCRIBED_EVENTS) t.ok(esl.received.includes(`event json ${name}`), `subscribed to ${name}`)
  const probes = () => esl.received.filter((l) => l === PROBE).length
  const atUp = probes()
  await waitFor('three idle probes after the link came up', () => probes() >= atUp + 3)
  t.equal(connected, 1, 'onConnected once, not per probe')
})

t.test('events arrive as header maps; bgapi and submit give the job body', async (t) => {
  const { esl, pbx } = await setup(t)
  await waitFor('link up', () => pbx.isConnected())
  const events: FsEvent[] = []
  pbx.onEvent((e) => events.push(e))
  esl.sendEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'u1', variable_cod_domain: 'example.test' })
  await waitFor('event', () => events.length > 0)
  t.same(events[0], { 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'u1', variable_cod_domain: 'example.test' })

  esl.jobBody = (c) => (c.startsWith('sofia_contact') ? 'sofia/internal/sip:1001@127.0.0.1:5071' : '+OK\n')
  const contact = await pbx.bgapi(cmd(commands.sofiaContact('alice', 'example.test')))
  t.same(contact, { ok: true, value: 'sofia/internal/sip:1001@127.0.0.1:5071' })

  let release!: (v: string) => void
  esl.jobBody = () => new Promise<string>((r) => (release = r))
  const sub = await pbx.submit(cmd(commands.status()), { resultTimeoutMs: 2000 })
  if (!sub.ok) return t.fail('not accepted')
  t.ok(esl.received.includes('bgapi status'), 'accepted before the job ended')
  release('-ERR USER_BUSY\n')
  t.same(await sub.value.result, { ok: true, value: '-ERR USER_BUSY\n' })
  t.equal(pbx.stats().pendingJobs, 0)
})

t.test('drop and reconnect: down, then up again with a resync signal; lost jobs fail', async (t) => {
  const { esl, pbx } = await setup(t)
  let connected = 0
  pbx.onConnected(() => connected++)
  await waitFor('link up', () => pbx.isConnected())
  esl.jobBody = (c) => (c === 'status' ? '+OK\n' : undefined) // the originate's job never ends on this socket
  const sub = await pbx.submit(cmd(commands.showChannelsJson()), { resultTimeoutMs: 10000 })
  if (!sub.ok) return t.fail('not accepted')
  esl.dropAll()
  t.same(await sub.value.result, { ok: false, error: { kind: 'disconnected' } }, 'the job went with the socket')
  await waitFor('second connection', () => connected === 2)
  t.ok(pbx.isConnected())
  t.equal(esl.connections(), 2)
  t.equal(pbx.stats().connections, 2)
})

t.test('a wrong password never counts as connected', async (t) => {
  const { esl, pbx } = await setup(t, 'WrongPass')
  let everUp = false
  pbx.onConnected(() => (everUp = true))
  await waitFor('a second auth attempt', () => esl.received.filter((l) => l === 'auth WrongPass').length >= 2)
  t.equal(everUp || pbx.isConnected(), false, 'refused, tried again, and never up meanwhile')
})

t.test('execute(): sendmsg execute, resolved by CHANNEL_EXECUTE_COMPLETE', async (t) => {
  const { esl, pbx } = await setup(t)
  await waitFor('link up', () => pbx.isConnected())
  const app = commands.app('playback', 'ivr/welcome.wav')
  if (!app.ok) return t.fail()
  const uuid = '11111111-1111-4111-8111-111111111111'
  const r = await pbx.execute(uuid, app.value)
  t.equal(r.ok ? r.value.Application : r.error.kind, 'playback')
  t.ok(esl.received.includes(`sendmsg ${uuid}`))
  const bad = await pbx.execute('not-a-uuid', app.value)
  t.equal(bad.ok, false)
})

t.test('frozen (SIGSTOP): quiet within quietAfterMs; queued commands withdrawn and never written; the written one is unconfirmed, not refused', async (t) => {
  const { esl, pbx } = await setup(t, 'ClueCon', 60_000)
  await waitFor('link up', () => pbx.isConnected())
  esl.freeze()
  const frozenAt = Date.now()
  const lag = lagMeter()
  const written = pbx.submit(cmd(commands.sofiaContact('first', 'example.test')), { acceptTimeoutMs: 1500, resultTimeoutMs: 5000 })
  const queued = [pbx.submit(cmd(commands.sofiaContact('second', 'example.test')), { resultTimeoutMs: 5000 }), pbx.bgapi(cmd(commands.sofiaContact('third', 'example.test')))]
  await waitFor('link quiet', () => !pbx.isConnected())
  const tookMs = Date.now() - frozenAt
  const blockedMs = lag.stop()
  t.ok(tookMs - blockedMs < 1000, `seen within 1 s (${tookMs} ms, of which ${blockedMs} ms this process could not run)`)
  t.equal(pbx.stats().state, 'quiet')
  const [second, third] = await Promise.all(queued)
  t.same(second, { ok: false, error: { kind: 'disconnected' } }, 'queued: refused at once')
  t.same(third, { ok: false, error: { kind: 'disconnected' } })
  t.same(await pbx.submit(cmd(commands.status()), { resultTimeoutMs: 100 }), { ok: false, error: { kind: 'disconnected' } }, 'new commands refused at once')
  const first = await written
  t.ok(first.ok && first.value.unconfirmed === true, 'written before the freeze: placed (unconfirmed), never an error')
  esl.thaw()
  await waitFor('link up again', () => pbx.isConnected())
  await barrier(t, pbx)
  const contacts = esl.received.filter((l) => l.startsWith('bgapi sofia_contact'))
  t.same(contacts, ['bgapi sofia_contact */first@example.test'], 'the withdrawn commands never reached FreeSWITCH')
  t.equal(pbx.stats().withdrawn, 2)
})

t.test('shutdown notice: the SHUTDOWN event stops the commands at once; back after the reconnection', async (t) => {
  const { esl, pbx } = await setup(t)
  let connected = 0
  pbx.onConnected(() => connected++)
  await waitFor('link up', () => pbx.isConnected())
  esl.shutdown(1500)
  await waitFor('down at the SHUTDOWN event', () => !pbx.isConnected(), 1400)
  t.equal(pbx.stats().state, 'shutting_down', 'down at the SHUTDOWN event, before the notice')
  t.equal(pbx.stats().connections, 1, 'on the same socket')
  t.same(await pbx.bgapi(cmd(commands.status())), { ok: false, error: { kind: 'disconnected' } })
  await waitFor('reconnected', () => connected === 2 && pbx.isConnected())
})

t.test('a disconnect notice alone also stops the commands', async (t) => {
  const { esl, pbx } = await setup(t)
  await waitFor('link up', () => pbx.isConnected())
  esl.sendNotice()
  await waitFor('down', () => !pbx.isConnected(), 500)
  t.equal(pbx.stats().state, 'shutting_down', 'the socket is still open, and unusable')
  t.equal(esl.connections(), 1)
})

t.test('FreeSWITCH killed: down the moment the socket closes', async (t) => {
  const esl = await startMiniEsl()
  const pbx = connectPbx({ host: '127.0.0.1', port: esl.port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 1000 })
  t.teardown(() => pbx.close())
  await waitFor('link up', () => pbx.isConnected())
  await esl.close()
  const at = Date.now()
  const lag = lagMeter()
  await waitFor('down', () => !pbx.isConnected(), 2000)
  const ms = Date.now() - at
  const blockedMs = lag.stop()
  t.ok(ms - blockedMs < 200, `down in ${ms} ms (of which ${blockedMs} ms this process could not run)`)
})

t.test('a command written when the socket drops is never written again on the next socket', async (t) => {
  const { esl, pbx } = await setup(t, 'ClueCon', 60_000)
  await waitFor('link up', () => pbx.isConnected())
  esl.stall = (c) => c.startsWith('originate')
  // A stand-in originate: the mini server never answers it (only the command's first word matters here).
  const originate = 'originate sofia/internal/x &park()' as EslCommand
  const placed = pbx.submit(originate, { resultTimeoutMs: 5000 })
  await waitFor('written', () => esl.received.some((l) => l.startsWith('bgapi originate')))
  esl.dropAll()
  const r = await placed
  t.ok(r.ok && r.value.unconfirmed === true, 'unconfirmed: it may have run')
  if (r.ok) t.same(await r.value.result, { ok: false, error: { kind: 'disconnected' } }, 'its job result is lost')
  await waitFor('reconnected', () => pbx.isConnected())
  await barrier(t, pbx)
  t.equal(esl.received.filter((l) => l.startsWith('bgapi originate')).length, 1, 'written once')
})

t.test('a command given up before its turn came is never written, even once its turn comes', async (t) => {
  const { esl, pbx } = await setup(t, 'ClueCon', 60_000)
  await waitFor('link up', () => pbx.isConnected())
  // FreeSWITCH answers nothing for a moment (shorter than quietAfterMs: the link stays up).
  esl.freeze()
  const first = pbx.submit('originate sofia/internal/first &park()' as EslCommand, { resultTimeoutMs: 5000 })
  // Queued behind the first (one command at a time): its wait ends before its turn comes.
  const second = await pbx.submit('originate sofia/internal/second &park()' as EslCommand, { acceptTimeoutMs: 100, resultTimeoutMs: 5000 })
  t.same(second, { ok: false, error: { kind: 'timeout' } }, 'timed out: refused, so it must never run')
  esl.thaw()
  const r = await first
  t.ok(r.ok && r.value.unconfirmed === undefined, 'the first answered')
  await barrier(t, pbx)
  t.ok(pbx.isConnected(), 'the link stayed up')
  t.same(
    esl.received.filter((l) => l.startsWith('bgapi originate')),
    ['bgapi originate sofia/internal/first &park()'],
    'the second never reached FreeSWITCH (esl-lite 3.2.0 keeps a command it timed out on queued, and writes it when its turn comes)',
  )
  t.equal(pbx.stats().withdrawn, 1)
})

t.test('the daemon blocked (event-loop lag) never declares a live link dead', async (t) => {
  const { pbx } = await setup(t)
  await waitFor('link up', () => pbx.isConnected())
  let downSeen = false
  const sampler = setInterval(() => {
    if (!pbx.isConnected()) downSeen = true
  }, 5)
  t.teardown(() => clearInterval(sampler))
  for (let i = 0; i < 3; i++) {
    const until = Date.now() + 1200 // longer than quietAfterMs, with probes outstanding
    while (Date.now() < until) {
      // busy: the event loop is blocked
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(downSeen, false)
  t.equal(pbx.stats().withdrawn, 0)
})

t.test('api(): an instant command runs with `api`, its output the reply; interleaved with bgapi, each gets its own, and nothing waits', async (t) => {
  const sim = new Simulator({ domains: [], password: 'ClueCon' })
  const port = await sim.listen(0)
  const pbx = connectPbx({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(async () => {
    await pbx.close()
    await sim.close()
  })
  await waitFor('link up', () => pbx.isConnected())
  const slot = (i: number) => ({ realm: 'cod_api.test', key: `k${i}` })
  const select = (i: number) => cmd(commands.hashSelect(slot(i)))
  const bg = (text: string) => pbx.bgapi(text as EslCommand, 2000)
  t.same(await pbx.api(select(0)), { ok: true, value: '-ERR no reply\n' }, 'no output: api_exec prints -ERR no reply')
  t.same(await pbx.api(cmd(commands.sofiaContact('nobody', 'api.test'))), { ok: true, value: 'error/user_not_registered' })
  // 50 of each at once: the session writes one at a time, every reply goes to its own command.
  const inserts = await Promise.all(Array.from({ length: 50 }, (_, i) => bg(`hash insert/cod_api.test/k${i}/v${i}`)))
  t.ok(inserts.every((r) => r.ok && r.value === '+OK\n'), 'bgapi inserts')
  const mixed = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? pbx.api(select(i)) : bg(`hash select/cod_api.test/k${i}`))))
  t.same(
    mixed.map((r) => (r.ok ? r.value : r.error.kind)),
    Array.from({ length: 50 }, (_, i) => `v${i}`),
    'api and bgapi interleaved: each its own value',
  )
  t.same(await pbx.api(cmd(commands.hashDelete(slot(1)))), { ok: true, value: '+OK\n' })
  t.same(await pbx.api(cmd(commands.hashDelete(slot(1)))), { ok: true, value: '-ERR Not found\n' })
  t.equal(sim.commands.filter((c) => c.text.startsWith('api hash')).length, 28, 'written as api (25 selects, 2 deletes and the first)')
  t.equal(pbx.stats().connections, 1, 'one socket all along: no reply was taken for a broken stream')
})

t.test('api() on a link that is down: disconnected at once, nothing written', async (t) => {
  const { esl, pbx } = await setup(t)
  await waitFor('up', () => pbx.isConnected())
  esl.dropAll()
  await esl.close()
  await waitFor('down', () => !pbx.isConnected())
  const before = esl.received.length
  t.same(await pbx.api(cmd(commands.hashSelect({ realm: 'cod_x', key: 'k' }))), { ok: false, error: { kind: 'disconnected' } })
  t.equal(esl.received.length, before)
})
