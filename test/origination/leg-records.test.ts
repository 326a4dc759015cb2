/**
 * src/origination/leg-records.ts: when a leg's record in FreeSWITCH (mod_hash) is deleted. Not
 * before the delay that leaves the request's result time to reach the journal; not while the
 * leg lives or its request is in flight; records falling due together go in one timer wake.
 */
import t, { type Test } from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import { createLegRecords } from '../../src/origination/leg-records.js'
import { silentLogger } from '../../src/util/logger.js'
import { withFakeClock, type FakeClock } from '../support/fake-clock.js'
import { FakePbx, flush } from '../support/fake-pbx.js'

const DOMAIN = 'example.com'
function setup(t: Test, clock: FakeClock, delayMs: number) {
  const pbx = new FakePbx()
  const channels = createChannelModel({ pbx, logger: silentLogger() })
  t.teardown(() => channels.close())
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
  /** Time passes on the fake clock; then the deletes it woke are sent. */
  const after = async (ms: number) => {
    await clock.advance(ms)
    await flush()
  }
  return { pbx, inFlight, records, legEnds, deleted, after }
}

t.test('a record that must wait is looked at again after its delay, also when the delay is shorter than the window', (t) =>
  withFakeClock(async (clock) => {
    // 60 ms is inside the 250 ms within which due records go together (DUE_TOGETHER_MS): a record
    // queued again in a wake used to fall inside that same wake and be looked at again at once,
    // spinning until the window passed (on the fake clock, forever).
    const s = setup(t, clock, 60)
    s.inFlight.add('req-1')
    s.legEnds('req-1', 'leg-a')
    await s.after(600)
    t.same(s.deleted(), [], 'kept while its request is in flight')
    s.inFlight.delete('req-1')
    await s.after(60)
    t.same(s.deleted(), ['leg-a'], 'deleted at the next look once the request is out')
  }),
)


t.test('a record goes once its delay has passed, not before', (t) =>
  withFakeClock(async (clock) => {
    const s = setup(t, clock, 5000)
    s.legEnds('req-1', 'leg-a')
    await s.after(4999)
    t.same(s.deleted(), [], 'kept during the delay, to its last millisecond')
    await s.after(1)
    t.same(s.deleted(), ['leg-a'], 'deleted as it ends')
    t.equal(s.pbx.commands.at(-1), `hash delete/cod_${DOMAIN}/req-1.leg-a`)
  }),
)

t.test('records falling due within a short while go together, in one wake', (t) =>
  withFakeClock(async (clock) => {
    const s = setup(t, clock, 1000)
    s.legEnds('req-1', 'leg-a')
    await s.after(100)
    s.legEnds('req-2', 'leg-b')
    await s.after(100)
    s.legEnds('req-3', 'leg-c')
    await s.after(100)
    s.legEnds('req-4', 'leg-d')
    // The first falls due at 1000 ms; the next two, due at 1100 and 1200 ms, go with it; the
    // fourth, due at 1300 ms, is past the 250 ms window and waits for its own time.
    await s.after(699)
    t.same(s.deleted(), [], 'none before the first is due')
    await s.after(1)
    t.same(s.deleted(), ['leg-a', 'leg-b', 'leg-c'], "three at the first one's time, in order")
    await s.after(299)
    t.same(s.deleted(), ['leg-a', 'leg-b', 'leg-c'], 'the fourth not before its time')
    await s.after(1)
    t.same(s.deleted(), ['leg-a', 'leg-b', 'leg-c', 'leg-d'])
  }),
)

t.test('a request still in flight keeps its records: they are looked at again after another delay', (t) =>
  withFakeClock(async (clock) => {
    const s = setup(t, clock, 1000)
    s.inFlight.add('req-1')
    s.legEnds('req-1', 'leg-a')
    await s.after(1500)
    t.same(s.deleted(), [], 'kept while the request is in flight')
    s.inFlight.delete('req-1')
    // Looked at again one delay after the first look (1000 + 1000 ms), not as soon as it is out of flight.
    await s.after(499)
    t.same(s.deleted(), [], 'not before its second look')
    await s.after(1)
    t.same(s.deleted(), ['leg-a'], 'deleted once it is not')
  }),
)

t.test('no record is deleted while the link is down; it is once it is back', (t) =>
  withFakeClock(async (clock) => {
    const s = setup(t, clock, 1000)
    s.pbx.connected = false
    s.legEnds('req-1', 'leg-a')
    await s.after(1500)
    t.same(s.deleted(), [])
    s.pbx.connected = true
    await s.after(499)
    t.same(s.deleted(), [], 'not before its second look')
    await s.after(1)
    t.same(s.deleted(), ['leg-a'])
  }),
)

t.test('forget(): the records of a recovered request go after the delay; close() cancels what is queued', (t) =>
  withFakeClock(async (clock) => {
    const s = setup(t, clock, 1000)
    s.records.forget(DOMAIN, 'req-9', ['leg-x', 'leg-y'])
    await s.after(1000)
    t.same(s.deleted(), ['leg-x', 'leg-y'])
    s.records.forget(DOMAIN, 'req-10', ['leg-z'])
    s.records.close()
    // A minute later: proved by advancing the clock, not by waiting.
    await s.after(60_000)
    t.same(s.deleted(), ['leg-x', 'leg-y'], 'nothing after close')
  }),
)
