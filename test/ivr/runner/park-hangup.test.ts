/** Hangup reasons and Park (timeout, music on hold, pick-up, caller hanging up). */
import t from 'tap'
import { kills, rig, runInline, wrap } from './helpers.js'

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length

t.test('Hangup as the first element rejects without answering', async (t) => {
  const r = await runInline(t, wrap('<Hangup reason="rejected"/><Speak>never</Speak>'), { answered: false })
  t.same(r.pbx.apps(), [], 'no answer, nothing else')
  t.same(kills(r), ['CALL_REJECTED'], 'one hangup, with the reason')
})

t.test('Hangup reasons: busy → USER_BUSY, none → NORMAL_CLEARING', async (t) => {
  const b = await runInline(t, wrap('<Hangup reason="busy"/>'), { answered: false })
  t.same(kills(b), ['USER_BUSY'])
  const n = await runInline(t, wrap('<Speak>bye</Speak><Hangup/><Speak>never</Speak>'))
  t.same(n.pbx.apps(), ['speak flite|kal|bye'])
  t.same(kills(n), ['NORMAL_CLEARING'])
})

t.test('Hangup reason from a template is checked', async (t) => {
  const r = await runInline(t, wrap('<Set var="r" val="angry"/><Hangup reason="{{ r }}"/>'))
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'], 'a runtime error, the call ends anyway')
})

t.test('Park of an unanswered call: no music, hung up at the timeout', async (t) => {
  const r = await runInline(t, wrap('<Park timeout="1"/><Speak>never</Speak>'), { answered: false })
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_CLEARING'])
})

t.test('Park of an answered call: music on hold; the caller hangs up: the timer is gone', async (t) => {
  const before = timers()
  const r = rig(t, { script: (rec) => (rec.app === 'endless_playback' ? { kind: 'hold' } : undefined) })
  r.parkInline(wrap('<Park/>'))
  for (let i = 0; i < 50 && r.pbx.apps().length === 0; i++) await new Promise<void>((res) => setImmediate(res))
  t.same(r.pbx.apps(), ['endless_playback local_stream://moh'])
  t.equal(r.runner.activeSessions(), 1)
  r.pbx.hangup(r.uuid)
  await r.settle()
  t.same(kills(r), [])
  t.equal(timers(), before, 'the 21600 s park timer was cleared')
})

t.test('Park: a call picked up meanwhile (bridged) is not hung up at the timeout', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'endless_playback' ? { kind: 'hold' } : undefined) })
  r.parkInline(wrap('<Park timeout="1"/>'))
  for (let i = 0; i < 50 && r.pbx.apps().length === 0; i++) await new Promise<void>((res) => setImmediate(res))
  r.pbx.emit({ 'Event-Name': 'CHANNEL_BRIDGE', 'Unique-ID': 'a0000000-0000-4000-8000-000000000000', 'Bridge-A-Unique-ID': 'a0000000-0000-4000-8000-000000000000', 'Bridge-B-Unique-ID': r.uuid })
  await r.settle()
  t.same(kills(r), [])
  t.ok(r.pbx.isUp(r.uuid))
})
