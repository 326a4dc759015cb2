/**
 * The lane's CTI normalisation (trace.ts ctiLines): what it lets differ between the real switch
 * and the simulator, and what it does not. Runs in `npm test`, without a switch.
 */
import t from 'tap'
import { ctiLines } from './trace.js'

const line = (event: string, uuid: string, state: string, other: string | null) => ({
  type: 'info_event',
  event,
  channel: { uuid, state, user_id: null, other_uuid: other, end_user: null },
})
const names = new Map<string, string>()
const up = [line('updated', 'A', 'bridged', 'B'), line('updated', 'B', 'bridged', 'A'), line('updated', 'A', 'hangup', 'B')]

t.test("a bridge's teardown: the partner's hangup and the unbridge in either order read the same", async (t) => {
  const hangupFirst = [...up, line('updated', 'B', 'hangup', 'A'), line('updated', 'A', 'hangup', null), line('updated', 'B', 'hangup', null), line('removed', 'A', 'hangup', null), line('removed', 'B', 'hangup', null)]
  const unbridgeFirst = [...up, line('updated', 'A', 'hangup', null), line('updated', 'B', 'answered', null), line('updated', 'B', 'hangup', null), line('removed', 'B', 'hangup', null), line('removed', 'A', 'hangup', null)]
  t.same(ctiLines(hangupFirst, names), ctiLines(unbridgeFirst, names))
  t.equal(ctiLines(hangupFirst, names).length, 7, 'only the one racing line is left out')
})

t.test('anything else after a hangup still counts', async (t) => {
  const ringing = [...up, line('updated', 'B', 'ringing', 'A'), line('updated', 'B', 'hangup', null)]
  t.equal(ctiLines(ringing, names).length, ringing.length, 'a partner ringing again is kept')
  const otherLeg = [...up, line('updated', 'B', 'hangup', 'C')]
  t.equal(ctiLines(otherLeg, names).length, otherLeg.length, 'a hangup bridged to another leg is kept')
  const noPartnerLine = [...up, line('removed', 'A', 'hangup', null)]
  t.equal(ctiLines(noPartnerLine, names).length, noPartnerLine.length)
})
