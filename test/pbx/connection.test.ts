import t, { type Test } from 'tap'
import { connectPbx, SUBSCRIBED_EVENTS, type PbxConnection } from '../../src/pbx/connection.js'
import * as commands from '../../src/pbx/commands.js'
import type { FsEvent } from '../../src/pbx/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { startMiniEsl, type MiniEsl } from './mini-esl.js'

const waitFor = async (what: string, cond: () => boolean, ms = 4000): Promise<void> => {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const cmd = (r: ReturnType<typeof commands.status>) => {
  if (!r.ok) throw new Error(r.error.reason)
  return r.value
}

async function setup(t: Test, password = 'ClueCon'): Promise<{ esl: MiniEsl; pbx: PbxConnection }> {
  const esl = await startMiniEsl()
  const pbx = connectPbx({ host: '127.0.0.1', port: esl.port, password, logger: silentLogger(), commandTimeoutMs: 1000, probeIntervalMs: 50, probeTimeoutMs: 400 })
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
  await new Promise((r) => setTimeout(r, 200))
  t.equal(connected, 1, 'onConnected once, not per probe')
  t.ok(esl.received.filter((l) => l === 'bgapi status').length >= 2, 'probes keep going')
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

t.test('while FreeSWITCH does not answer: down, and commands are refused at once, not queued', async (t) => {
  const { esl, pbx } = await setup(t)
  await waitFor('link up', () => pbx.isConnected())
  esl.stall = () => true
  await waitFor('link down', () => !pbx.isConnected())
  const before = esl.received.length
  const r = await pbx.bgapi(cmd(commands.status()))
  t.same(r, { ok: false, error: { kind: 'disconnected' } })
  const s = await pbx.submit(cmd(commands.status()), { resultTimeoutMs: 100 })
  t.equal(s.ok, false)
  t.equal(esl.received.length, before, 'nothing sent')
  esl.stall = () => false
  esl.dropAll()
  await waitFor('link up again', () => pbx.isConnected())
})

t.test('a wrong password never counts as connected', async (t) => {
  const { esl, pbx } = await setup(t, 'WrongPass')
  await waitFor('an auth attempt', () => esl.received.includes('auth WrongPass'))
  await new Promise((r) => setTimeout(r, 300))
  t.equal(pbx.isConnected(), false)
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
