/** Channel limit and ESL reconnection, end to end through the simulator. */
import t from 'tap'
import { connectPbx } from '../../src/pbx/connection.js'
import { createChannelModel } from '../../src/channels/index.js'
import { createEngine } from '../../src/origination/engine.js'
import { silentLogger } from '../../src/util/logger.js'
import { harness, waitFor } from './e2e-harness.js'
import { DOMAIN, RecordingSink, plan } from './helpers.js'

t.test('channel limit: exact under concurrency, calls not made through the API count, released when calls end', async (t) => {
  // Each request holds two channels: its leg, and its destination's leg for after the answer
  // (the parking dialplan never creates it, but the daemon's would: the hold lasts while the call does).
  const h = await harness(t, { channel_limit: 11 }, { park: true })
  // A phone calls in: a channel the API did not make.
  const inbound = await h.sim.placeInboundCall({ domain: DOMAIN, fromUser: 'bob', destination: '5555' })
  await waitFor('inbound channel counted', () => h.engine.inUse(DOMAIN) === 1)

  const plans = Array.from({ length: 12 }, (_, i) => plan({ kind: 'pstn', number: `03100000${String(i).padStart(2, '0')}` }))
  const replies = await Promise.all(plans.map((p) => h.engine.originate(p)))
  const admitted = plans.filter((_, i) => replies[i]?.ok === true)
  t.equal(admitted.length, 5, 'exactly the free slots are admitted (two each)')
  t.same(
    replies.filter((r) => !r.ok).map((r) => (r.ok ? '' : r.error.reason)),
    Array(7).fill('channel_limit_reached'),
  )
  t.equal(h.originates().length, 5, 'the refused requests originated nothing')
  for (const p of admitted) t.equal((await h.sink.waitFor(p.requestId)).result_code, 0)
  await waitFor('answered calls stay up', () => h.sim.liveChannels().length === 6)
  t.equal(h.engine.inUse(DOMAIN), 11, '6 live channels and the 5 destination legs held')
  t.equal(h.channels.liveCount(DOMAIN), 6)

  // Two calls end (the far end hangs up): an API call gives back its two slots, the inbound call its one.
  const uuids = replies.flatMap((r) => (r.ok ? r.value.uuids : []))
  t.ok(h.sim.remoteHangup(uuids[0] ?? ''))
  t.ok(h.sim.remoteHangup(inbound))
  await waitFor('slots released', () => h.engine.inUse(DOMAIN) === 8)
  const more = await Promise.all([0, 1, 2].map((i) => h.engine.originate(plan({ kind: 'pstn', number: `0320000000${i}` }))))
  t.same(
    more.map((r) => (r.ok ? 'ok' : r.error.reason)).sort(),
    ['channel_limit_reached', 'channel_limit_reached', 'ok'],
  )
})

t.test('ESL drop while the leg rings: the result still arrives, exactly once', async (t) => {
  const h = await harness(t, {}, { park: true })
  h.sim.setPstnBehaviour(DOMAIN, '0355550000', { answer_after: 10 }) // 0.5 s of simulated ringing
  const p = plan({ kind: 'pstn', number: '0355550000' }, { answerTimeoutSec: 60 })
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  const connections = h.pbx.stats().connections
  const resyncs = () => h.sim.commands.filter((c) => c.text.startsWith('bgapi show channels as json')).length
  const before = resyncs()
  h.sim.dropConnections()
  await waitFor('reconnected', () => h.pbx.stats().connections > connections && h.pbx.isConnected())
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[0] })
  t.ok(resyncs() > before, 'the live channels were read again after the reconnection')
  await new Promise((res) => setTimeout(res, 300))
  t.equal(h.sink.of(p.requestId).length, 1, 'one result only')
})

t.test('ESL down while the leg answers: the outcome is read back after the reconnection', async (t) => {
  const h = await harness(t, {}, { park: true })
  h.sim.setPstnBehaviour(DOMAIN, '0355551111', { answer_after: 1 })
  const p = plan({ kind: 'pstn', number: '0355551111' })
  const r = await h.engine.originate(p)
  if (!r.ok) return t.fail(r.error.description)
  h.sim.dropConnections()
  // The answer (50 ms) and the job result happen while no socket listens, or just after.
  t.same(await h.sink.waitFor(p.requestId), { result_code: 0, uuid: r.value.uuids[0] })
  t.equal(h.channels.get(r.value.uuids[0] ?? '')?.answered, true, 'the channel model knows the live answered leg')
  await new Promise((res) => setTimeout(res, 300))
  t.equal(h.sink.of(p.requestId).length, 1)
})

t.test('channels live before the daemon started are counted (show channels + uuid_getvar)', async (t) => {
  const h = await harness(t, { channel_limit: 3 }, { park: true })
  await h.sim.placeInboundCall({ domain: DOMAIN, fromUser: 'bob', destination: '5555' })
  const first = plan({ kind: 'pstn', number: '0312345678' })
  t.ok((await h.engine.originate(first)).ok)
  await h.sink.waitFor(first.requestId)
  await waitFor('both counted, and the destination leg held', () => h.engine.inUse(DOMAIN) === 3)

  // A daemon restart: a new connection and engine that saw none of the events.
  const pbx = connectPbx({ host: '127.0.0.1', port: h.port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  const channels = createChannelModel({ pbx, logger: silentLogger(), directory: () => h.rt.directory })
  const engine = createEngine({ pbx, channels, runtime: () => h.rt, callbacks: new RecordingSink(), logger: silentLogger(), sipProfile: 'internal', huntConcurrency: 1 })
  t.teardown(async () => {
    await engine.close()
    channels.close()
    await pbx.close()
  })
  await waitFor('counted after the first sync', () => engine.inUse(DOMAIN) === 2)
  const ours = channels.liveChannels(DOMAIN).find((c) => c.requestId === first.requestId)
  t.equal(ours?.role, 'originator', 'our variables were read back from the channel')
  const r = await engine.originate(plan({ kind: 'pstn', number: '0312345679' }))
  t.equal(r.ok ? 'ok' : r.error.reason, 'channel_limit_reached')
})
