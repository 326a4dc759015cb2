/**
 * Issue 13 D2 and D3 on the simulator lane, with the scenarios the real-FreeSWITCH lane also runs
 * (test/realfs/scenarios.ts): the legs a bridge creates present who calls (the user's label and
 * extension, a PSTN party's number), and a destination that never answers rings the domain's
 * destination_timeout, after which both legs end NO_ANSWER.
 */
import t from 'tap'
import { simLane } from '../realfs/world.js'
import { runScenario, scenarios } from '../realfs/scenarios.js'

const lane = simLane(t)

const run = (prefix: string) => {
  const s = scenarios.find((x) => x.name.startsWith(prefix))
  if (s === undefined) throw new Error(`no scenario ${prefix}`)
  return runScenario(lane.w, lane.app, s)
}

t.test('D2: bob sees alice (label, extension) when her answered leg is connected to him', async (t) => {
  const trace = await run('call_user alice (two terminals')
  t.match(trace.legs.find((l) => l.startsWith('o:bob')), /cid=Alice\/1001 /)
})

t.test('D2: alice sees the PSTN party\'s number, not "Outbound Call"', async (t) => {
  const trace = await run('call_external to bob')
  t.match(trace.legs.find((l) => l.startsWith('o:bob')), /cid=0399990000\/0399990000 /)
})

t.test('D3: a user destination that never answers: NO_ANSWER after destination_timeout', async (t) => {
  const trace = await run('D3: a destination user')
  t.same(trace.callbacks, [{ result_code: 0, uuid: 'o:0399990000' }], 'the target answered')
  t.match(trace.legs.find((l) => l.startsWith('o:erin')), /HANGUP\(NO_ANSWER\)$/, 'erin\'s leg timed out')
  t.match(trace.legs.find((l) => l.startsWith('o:0399990000')), /HANGUP\(NO_ANSWER\)/, 'the target leg ends with the cause')
})

t.test('D3: a PSTN destination that never answers: NO_ANSWER after destination_timeout', async (t) => {
  const trace = await run('D3: a PSTN destination')
  t.match(trace.legs.find((l) => l.startsWith('o:0322223333')), /HANGUP\(NO_ANSWER\)$/)
  t.match(trace.legs.find((l) => l.startsWith('o:bob')), /HANGUP\(NO_ANSWER\)/)
})
