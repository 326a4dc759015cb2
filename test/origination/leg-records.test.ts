/**
 * src/origination/leg-records.ts: when a leg's record in FreeSWITCH (mod_hash) is deleted. Not
 * before the delay that leaves the request's result time to reach the journal; not while the
 * leg lives or its request is in flight; records falling due together go in one timer wake.
 */
import t, { type Test } from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import { createLegRecords } from '../../src/origination/leg-records.js'
import { silentLogger } from '../../src/util/logger.js'
import { FakePbx } from './fake-pbx.js'

const DOMAIN = 'example.com'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function setup(t: Test, delayMs: number) {
  const pbx = new FakePbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  const inFlight = new Set<string>()
  const records = createLegRecords({ pbx, channels, commandTimeoutMs: 1000, inFlight: (id) => inFlight.has(id), forgetDelayMs: delayMs })
  t.teardown(() => records.close())
  /** An originated leg of `request` rings and ends (CHANNEL_CREATE ... CHANNEL_DESTROY). */
  const legEnds = (request: string, uuid: string) => {
    pbx.emit({
      'Event-Name': 'CHANNEL_CREATE',
      'Unique-ID': uuid,
      'Answer-State': 'ringing',
      'Call-Direction': 'outbound',
      variable_domain_name: DOMAIN,
      variable_cod_domain: DOMAIN,
      variable_cod_request_id: request,
      variable_cod_role: 'originator',
    })
    pbx.hangup(uuid, 'NO_ANSWER')
  }
  const deleted = () => pbx.commands.filter((c) => c.startsWith('hash delete/')).map((c) => c.slice(c.lastIndexOf('.') + 1))
  return { pbx, inFlight, records, legEnds, deleted }
}

t.test('a record goes once its delay has passed, not before', async (t) => {
  const s = setup(t, 80)
  s.legEnds('req-1', 'leg-a')
  await sleep(30)
  t.same(s.deleted(), [], 'kept during the delay')
  await sleep(120)
  t.same(s.deleted(), ['leg-a'], 'deleted after it')
  t.equal(s.pbx.commands.at(-1), `hash delete/cod_${DOMAIN}/req-1.leg-a`)
})

t.test('records falling due within a short while go together, in one wake', async (t) => {
  const s = setup(t, 100)
  s.legEnds('req-1', 'leg-a')
  await sleep(40)
  s.legEnds('req-2', 'leg-b')
  await sleep(40)
  s.legEnds('req-3', 'leg-c')
  // The first falls due at 100 ms; the other two, due at about 140 and 180 ms, go with it.
  await sleep(40)
  t.same(s.deleted(), ['leg-a', 'leg-b', 'leg-c'], 'all three at the first one\'s time, in order')
})

t.test('a request still in flight keeps its records: they are looked at again after another delay', async (t) => {
  const s = setup(t, 60)
  s.inFlight.add('req-1')
  s.legEnds('req-1', 'leg-a')
  await sleep(90)
  t.same(s.deleted(), [], 'kept while the request is in flight')
  s.inFlight.delete('req-1')
  await sleep(100)
  t.same(s.deleted(), ['leg-a'], 'deleted once it is not')
})

t.test('no record is deleted while the link is down; it is once it is back', async (t) => {
  const s = setup(t, 60)
  s.pbx.connected = false
  s.legEnds('req-1', 'leg-a')
  await sleep(90)
  t.same(s.deleted(), [])
  s.pbx.connected = true
  await sleep(100)
  t.same(s.deleted(), ['leg-a'])
})

t.test('forget(): the records of a recovered request go after the delay; close() cancels what is queued', async (t) => {
  const s = setup(t, 60)
  s.records.forget(DOMAIN, 'req-9', ['leg-x', 'leg-y'])
  await sleep(100)
  t.same(s.deleted(), ['leg-x', 'leg-y'])
  s.records.forget(DOMAIN, 'req-10', ['leg-z'])
  s.records.close()
  await sleep(100)
  t.same(s.deleted(), ['leg-x', 'leg-y'], 'nothing after close')
})
