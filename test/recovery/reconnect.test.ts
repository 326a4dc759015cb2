/**
 * After an ESL RECONNECT (the daemon kept running, its link to FreeSWITCH was lost for a while):
 * requests in flight whose legs answered and ended, or rang out, while no event could reach the
 * daemon get their true outcome from the legs' own records (src/pbx/leg-record.ts), not a cause
 * made up from a channel that simply vanished; exactly one result each.
 */
import t from 'tap'
import { acceptedBodies, basic, receiver, sleep, TOKENS, waitFor } from '../faults/harness/in-process.js'
import { recoveryRig } from './harness.js'

t.setTimeout(90_000)

const USERS = [
  // ×0.1: answers after 0.8 s, hangs up 0.4 s later.
  { id: '12', name: 'later', extension: '1012', password: 'later-sip-secret', sim: { terminals: [{ answer_after: 8, hangup_after: 4 }] } },
]

t.test('link lost while calls end: answered and rung-out legs are read from their records', async (t) => {
  const rig = await recoveryRig(t, USERS)
  const rx = await receiver(t)
  const { daemon } = await rig.daemon()
  const call = async (body: unknown) => {
    const res = await fetch(`${daemon.baseUrl}/api/call_user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic('fault.test', TOKENS['fault.test'] ?? '') },
      body: JSON.stringify(body),
    })
    return { status: res.status, json: (await res.json()) as { uuids?: string[] }, requestId: res.headers.get('x-request-id') ?? '' }
  }
  const answered = await call({ user_name: 'later', destination: 'bob', callback_url: rx.url })
  // originate_timeout 10 = 1 s under the simulator's time scale.
  const rangOut = await call({ user_name: 'ring', destination: 'bob', callback_url: rx.url, answer_timeout: 10 })
  t.equal(answered.status, 200)
  t.equal(rangOut.status, 200)
  const uuids = [answered.json.uuids?.[0] ?? '', rangOut.json.uuids?.[0] ?? '']
  // Each leg carries its hangup hook from the originate (pbx/commands.ts hangupRecordVar).
  await waitFor('hooks set', () => rig.sim.liveChannels().filter((c) => uuids.includes(c.uuid) && c.variables.api_hangup_hook !== undefined).length === 2)

  rig.relay.cut()
  await waitFor('the link seen down', () => !daemon.pbx.isConnected())
  await waitFor('both calls over inside FreeSWITCH', () => !rig.sim.liveChannels().some((c) => uuids.includes(c.uuid)), 10000)
  t.equal(rx.deliveries.length, 0, 'nothing reported while the link was down')
  rig.relay.restore()

  await waitFor('two results', () => rx.accepted().size === 2, 40000)
  await sleep(300)
  const bodies = acceptedBodies(rx)
  t.equal(rx.deliveries.length, 2, 'exactly one result per request')
  t.same(
    bodies.find((b) => b.result_code === 0),
    { result_code: 0, uuid: uuids[0] },
    'answered while the link was down: answered',
  )
  t.same(
    bodies.find((b) => b.result_code !== 0),
    { result_code: 500, error: { id: 'no_answer', cause: 'NO_ANSWER' } },
    'rang out while the link was down: its true cause',
  )
})
