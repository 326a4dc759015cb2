/** The channel model over a scripted ESL connection: what origination reads of it. */
import t from 'tap'
import { createChannelModel, type ChannelChange } from '../../src/channels/index.js'
import { silentLogger } from '../../src/util/logger.js'
import { FakePbx, flush } from '../support/fake-pbx.js'

/** Not connected yet, so the model does not re-read at creation: these tests trigger the re-reads. */
const disconnectedPbx = (): FakePbx => Object.assign(new FakePbx(), { connected: false })

const U = (n: number) => `${String(n).repeat(8)}-0000-4000-8000-000000000000`.slice(0, 36)

t.test('domain of a channel: cod_domain, else domain_name / dialed_domain / presence / the other leg', async (t) => {
  const pbx = disconnectedPbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  t.teardown(() => channels.close())
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(1), variable_cod_domain: 'A.test', variable_domain_name: 'b.test' })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(2), variable_domain_name: 'b.test' })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(3), variable_dialed_domain: 'b.test' })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(4), variable_presence_id: '1001@c.test' })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(5), 'Other-Leg-Unique-ID': U(1) })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(6) })
  t.same(
    [1, 2, 3, 4, 5, 6].map((n) => channels.get(U(n))?.domain),
    ['a.test', 'b.test', 'b.test', 'c.test', 'a.test', undefined],
  )
  t.same(['a.test', 'b.test', 'c.test'].map((d) => channels.liveCount(d)), [2, 2, 1])
  // A later event that names the domain places the channel.
  pbx.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': U(6), variable_cod_domain: 'c.test', 'Answer-State': 'answered' })
  t.equal(channels.liveCount('c.test'), 2)
})

t.test('lifecycle: live until hangup; one hangup change for HANGUP + HANGUP_COMPLETE; cod_* variables kept', async (t) => {
  const pbx = disconnectedPbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  t.teardown(() => channels.close())
  const changes: ChannelChange[] = []
  channels.onChange((c) => changes.push(c))
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(1), variable_cod_domain: 'a.test', variable_cod_request_id: 'r1', variable_cod_role: 'originator', variable_cod_end_user: '%7B%7D' })
  pbx.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': U(1) })
  pbx.emit({ 'Event-Name': 'CHANNEL_BRIDGE', 'Unique-ID': U(1), 'Other-Leg-Unique-ID': U(2) })
  t.equal(channels.get(U(1))?.otherUuid, U(2))
  t.same(channels.get(U(1))?.vars, { cod_domain: 'a.test', cod_request_id: 'r1', cod_role: 'originator', cod_end_user: '%7B%7D' })
  pbx.emit({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': U(1), 'Hangup-Cause': 'NORMAL_CLEARING' })
  t.equal(channels.liveCount('a.test'), 0, 'not counted once hung up')
  pbx.emit({ 'Event-Name': 'CHANNEL_HANGUP_COMPLETE', 'Unique-ID': U(1), 'Hangup-Cause': 'NORMAL_CLEARING' })
  pbx.emit({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': U(1) })
  t.same(
    changes.map((c) => c.kind),
    ['created', 'answered', 'bridged', 'hangup', 'destroyed'],
  )
  t.equal(changes[3]?.channel.hangupCause, 'NORMAL_CLEARING')
  t.equal(channels.get(U(1)), undefined, 'forgotten after CHANNEL_DESTROY')
  pbx.emit({ 'Event-Name': 'CHANNEL_EXECUTE_COMPLETE', 'Unique-ID': U(1), variable_cod_domain: 'a.test' })
  t.equal(channels.get(U(1)), undefined, 'a late event does not bring it back')
  t.equal(channels.liveCount('a.test'), 0)
  // A channel first seen through a later event (created while the socket was down) is reported created.
  pbx.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': U(3), variable_cod_domain: 'a.test', 'Answer-State': 'answered' })
  t.same(changes.slice(-2).map((c) => c.kind), ['created', 'answered'])
  t.equal(channels.get(U(3))?.answered, true)
})

t.test('resync: channels gone meanwhile are dropped, new ones adopted with their variables', async (t) => {
  const pbx = disconnectedPbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  t.teardown(() => channels.close())
  const changes: ChannelChange[] = []
  channels.onChange((c) => changes.push(c))
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(1), variable_cod_domain: 'a.test' })
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(2), variable_cod_domain: 'a.test' })
  // While disconnected: 1 ended, 2 was answered, 3 appeared.
  pbx.vanish(U(1))
  pbx.live.set(U(2), { answered: true, vars: {} })
  pbx.live.set(U(3), { answered: false, vars: { cod_domain: 'a.test', cod_request_id: 'r3', cod_role: 'originator' } })
  const resynced: number[] = []
  channels.onResynced((at) => resynced.push(at))
  pbx.reconnect()
  await flush(10)
  t.equal(resynced.length, 1)
  t.equal(channels.get(U(1)), undefined)
  t.equal(channels.get(U(2))?.answered, true)
  t.match(channels.get(U(3)), { domain: 'a.test', requestId: 'r3', role: 'originator', state: 'ringing' })
  t.equal(channels.liveCount('a.test'), 2)
  t.same(
    changes.filter((c) => c.resync === true).map((c) => [c.kind, c.channel.uuid]),
    [
      ['destroyed', U(1)],
      ['answered', U(2)],
      ['created', U(3)],
    ],
  )
  t.ok(pbx.commands.includes(`uuid_getvar ${U(3)} cod_request_id`))
})

t.test('resync failure is reported, nothing is dropped', async (t) => {
  const pbx = disconnectedPbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  t.teardown(() => channels.close())
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U(1), variable_cod_domain: 'a.test' })
  pbx.connected = false
  const r = await channels.resync()
  t.equal(r.ok, false)
  t.equal(channels.liveCount('a.test'), 1)
})
