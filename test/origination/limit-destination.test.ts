/**
 * The destination's share of the channel limit (docs/engine.md "Channel limit"): how many legs a
 * destination may create (destination-legs.ts), the engine's admission with them, the hold's
 * end, and the dialplan's check before a bridge (xmlcurl/bridge-gate.ts, engine.mayBridge).
 */
import t from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import { destinationSlots } from '../../src/origination/destination-legs.js'
import { createEngine, type Engine } from '../../src/origination/engine.js'
import type { Destination } from '../../src/origination/plan.js'
import { refusal } from '../../src/origination/refusal.js'
import { silentLogger } from '../../src/util/logger.js'
import { err, ok } from '../../src/util/result.js'
import { answerFetch, FetchForm } from '../../src/xmlcurl/index.js'
import type { BridgeGate } from '../../src/xmlcurl/bridge-gate.js'
import { actionsOf, makeRuntime, originatedLeg, overTheWire, phoneCall } from '../xmlcurl/helpers.js'
import { FakePbx, flush } from '../support/fake-pbx.js'
import { DOMAIN, RecordingSink, domainConfig, groupOf, plan, runtimeWith, userOf } from './helpers.js'

const C = (user: string, n: number) => `sofia/internal/sip:${user}@127.0.0.1:${5060 + n}`

function setup(over: Record<string, unknown> = {}) {
  const pbx = new FakePbx()
  const rt = runtimeWith([domainConfig(over)])
  const engine: Engine = createEngine({
    pbx,
    channels: createChannelModel({ pbx, logger: silentLogger(), directory: () => rt.directory }),
    runtime: () => rt,
    callbacks: new RecordingSink(),
    logger: silentLogger(),
    sipProfile: 'internal',
    huntConcurrency: 4,
  })
  return { pbx, rt, engine }
}

t.test('destinationSlots: one per terminal of a user, the largest member of a group, one otherwise', async (t) => {
  const rt = runtimeWith([domainConfig()])
  const dom = rt.directory.domain(DOMAIN)
  if (dom === undefined) return t.fail()
  const contacts: Record<string, string[]> = { alice: [C('alice', 1), C('alice', 2), C('alice', 3)], bob: [C('bob', 1)] }
  const lookup = async (user: string) => ok(contacts[user] ?? [])
  const slots = (d: Destination) => destinationSlots(d, dom, lookup)
  t.same(await slots({ kind: 'user', user: userOf(rt, 'alice') }), ok(3), "all of alice's terminals ring together")
  t.same(await slots({ kind: 'user', user: userOf(rt, 'carol') }), ok(1), 'none registered now: one, for a terminal that registers before the answer')
  t.same(await slots({ kind: 'group', group: groupOf(rt, 'sales') }), ok(3), 'members ring one after the other: the largest one')
  t.same(await slots({ kind: 'pstn', number: '0399990000' }), ok(1))
  t.same(await slots({ kind: 'extension', extension: { number: '3001', xml_url: 'https://ivr.example/x' } }), ok(1), 'an IVR: its Transfer')
  const failing = await destinationSlots({ kind: 'group', group: groupOf(rt, 'sales') }, dom, async (user) =>
    user === 'bob' ? err(refusal('pbx_unavailable', 'sofia_contact: disconnected')) : ok([]),
  )
  t.equal(failing.ok ? 'ok' : failing.error.reason, 'pbx_unavailable', 'a lookup that fails refuses the request')
})

t.test('admission reserves the destination user\'s terminals; refused, nothing is originated', async (t) => {
  const { pbx, rt, engine } = setup({ channel_limit: 4 })
  t.teardown(() => engine.close())
  pbx.contacts.set(`bob@${DOMAIN}`, [C('bob', 1)])
  pbx.contacts.set(`alice@${DOMAIN}`, [C('alice', 1), C('alice', 2)])
  const toAlice = () => plan({ kind: 'user', user: userOf(rt, 'bob'), autoAnswer: false }, { destination: { kind: 'user', user: userOf(rt, 'alice') } })
  const first = await engine.originate(toAlice())
  t.ok(first.ok)
  t.equal(engine.inUse(DOMAIN), 3, "bob's leg + alice's two terminals")
  const second = await engine.originate(toAlice())
  t.equal(second.ok ? 'ok' : second.error.reason, 'channel_limit_reached')
  t.match(second.ok ? '' : second.error.description, /4 in use|3 in use, 3 needed/)
  t.equal(pbx.originates().length, 1, 'the refused request originated nothing')
  t.equal(engine.inUse(DOMAIN), 3, 'and reserved nothing')
})

t.test('the hold ends when the call is not answered, and when the answered leg hangs up', async (t) => {
  const { pbx, rt, engine } = setup({ channel_limit: 10 })
  t.teardown(() => engine.close())
  pbx.contacts.set(`bob@${DOMAIN}`, [C('bob', 1)])
  const p1 = plan({ kind: 'user', user: userOf(rt, 'bob'), autoAnswer: false })
  const r1 = await engine.originate(p1)
  if (!r1.ok) return t.fail()
  const job1 = pbx.originates()[0]
  if (job1 === undefined) return t.fail()
  t.equal(engine.inUse(DOMAIN), 2)
  job1.resolve({ ok: true, value: '-ERR NO_ANSWER\n' })
  await flush()
  t.equal(engine.inUse(DOMAIN), 0, 'not answered: no destination leg can come')

  const p2 = plan({ kind: 'user', user: userOf(rt, 'bob'), autoAnswer: false })
  const r2 = await engine.originate(p2)
  if (!r2.ok) return t.fail()
  const job2 = pbx.originates()[1]
  const leg = r2.value.uuids[0] ?? ''
  if (job2 === undefined) return t.fail()
  pbx.create(job2, leg)
  pbx.answer(leg)
  job2.resolve({ ok: true, value: `+OK ${leg}\n` })
  await flush()
  t.equal(engine.inUse(DOMAIN), 2, 'answered: its leg, and the destination held while it lives')
  t.ok(engine.mayBridge(DOMAIN, p2.requestId, leg), 'the dialplan may bridge it')
  // The dialplan's bridge creates the destination leg: it takes the held slot over.
  pbx.inbound('dest-1', DOMAIN)
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'dest-2', 'Answer-State': 'ringing', 'Call-Direction': 'outbound', variable_cod_domain: DOMAIN, variable_cod_request_id: p2.requestId, variable_cod_role: 'destination' })
  await flush()
  t.equal(engine.inUse(DOMAIN), 3, 'an inbound call + the answered leg + its destination leg (its slot, not counted twice)')
  pbx.hangup('dest-1', 'NORMAL_CLEARING')
  pbx.hangup(leg, 'NORMAL_CLEARING')
  pbx.hangup('dest-2', 'NORMAL_CLEARING')
  await flush()
  t.equal(engine.inUse(DOMAIN), 0, 'the answered leg hung up: the hold is gone')
  t.notOk(engine.mayBridge(DOMAIN, p2.requestId, undefined), 'a request without a hold and without a caller cannot bridge')
})

t.test('mayBridge for a request the engine did not admit (placed before a restart): a one-leg hold if it fits', async (t) => {
  const { pbx, engine } = setup({ channel_limit: 2 })
  t.teardown(() => engine.close())
  pbx.inbound('old-answered-leg', DOMAIN)
  await flush()
  t.ok(engine.mayBridge(DOMAIN, 'req-before-restart', 'old-answered-leg'), 'room for one more')
  t.equal(engine.inUse(DOMAIN), 2, 'the hold counts from now on')
  t.ok(engine.mayBridge(DOMAIN, 'req-before-restart', 'old-answered-leg'), 'asked again (a second bridge): the same hold')
  pbx.inbound('another', DOMAIN)
  await flush()
  t.notOk(engine.mayBridge(DOMAIN, 'req-other', 'another'), 'no room: refused')
})

t.test('the dialplan asks the gate before a request\'s bridge, and hangs up with NORMAL_CIRCUIT_CONGESTION when refused', async (t) => {
  const runtime = makeRuntime()
  const asked: Array<[string, string, string | undefined]> = []
  let allow = false
  const gate: BridgeGate = {
    mayBridge(domain, requestId, callerUuid) {
      asked.push([domain, requestId, callerUuid])
      return allow
    },
  }
  const actions = (form: URLSearchParams) => {
    const a = answerFetch(new FetchForm(overTheWire(form)), runtime.directory, undefined, gate)
    if (!a.found) throw new Error(a.reason)
    return actionsOf(a.xml)
  }
  const toBob = originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }, { 'Unique-ID': 'leg-uuid-1' })
  t.same(actions(toBob), ['hangup NORMAL_CIRCUIT_CONGESTION'], 'no room: no bridge')
  t.same(asked, [['example.test', 'req-0001', 'leg-uuid-1']])
  t.same(actions(originatedLeg({ cod_dest_kind: 'pstn', cod_dest_value: '0399990000' })), ['hangup NORMAL_CIRCUIT_CONGESTION'], 'a PSTN bridge too')
  allow = true
  t.ok(actions(toBob).includes('bridge user/bob@example.test'), 'held: the bridge is served')
  asked.length = 0
  allow = false
  t.ok(actions(originatedLeg({ cod_dest_kind: 'extension', cod_dest_value: '3001' })).includes('park'), 'an IVR parks: no leg, no question')
  t.ok(actions(phoneCall('1002')).some((a) => a.startsWith('bridge ')), 'a call not made through the API is not checked')
  t.same(asked, [])
})
