/**
 * Issue 29 item 6 on the simulator: every end-to-end scenario (test/realfs/scenarios.ts, which the
 * real-FreeSWITCH lane runs on both switches) asks for its requests' status events, and each
 * scenario's are the sequence its `status` says, with nothing statusProblems finds wrong (numbered
 * 1..n in order, each event once per leg in a call's order, completed last, billsec and duration
 * as the switch's own CHANNEL_HANGUP_COMPLETE tells). The expected lines are in
 * test/realfs/expected-status.ts, which the real lane asserts too.
 */
import t from 'tap'
import { simLane } from '../realfs/world.js'
import { EXPECTED_STATUS } from '../realfs/expected-status.js'
import { runScenario, scenarios } from '../realfs/scenarios.js'

const lane = simLane(t)

for (const s of scenarios) {
  t.test(s.name, async (t) => {
    const trace = await runScenario(lane.w, lane.app, s)
    t.same(trace.status, EXPECTED_STATUS[s.name], 'the status events of each leg, in a call\'s order')
    t.same(trace.statusProblems, [], 'numbered 1..n, each event once in a call\'s order, completed last, billsec as the switch\'s')
  })
}
