/**
 * Recovery after a crash, from outside (issue 11 item 2): the daemon as a child process killed
 * with SIGKILL while its calls run, the simulator in a process of its own, then a new daemon on
 * the same files (and journal). Each request accepted before the kill gets exactly one result:
 *
 * (a) its call still ringing at the restart: adopted, answered, bridged, result 0 with its uuid;
 * (b) its call ended while no daemon ran: the true outcome from the legs' own records in
 *     FreeSWITCH's mod_hash (answered and hung up: result 0; never answered: no_answer);
 * (c) no trace left (FreeSWITCH restarted too): `outcome_unknown`.
 */
import t, { type Test } from 'tap'
import { connectPbx } from '../../src/pbx/connection.js'
import * as commands from '../../src/pbx/commands.js'
import { silentLogger } from '../../src/util/logger.js'
import { faultStack, sleep, waitFor, type FaultStack } from '../faults/harness/stack.js'
import { faultyReceiver, type FaultyReceiver } from '../faults/harness/receiver.js'

t.setTimeout(120_000)

type Doc = Record<string, unknown>

/** Users of these cases, added to the fault suite's domain (delays ×0.1: answer_after 150 = 15 s, long enough to outlast a restart). */
const addUsers = (doc: Doc): void => {
  const users = doc.users as Doc[]
  users.push(
    { id: '11', name: 'slow', extension: '1011', password: 'slow-sip-secret', sim: { terminals: [{ answer_after: 150 }] } },
    { id: '12', name: 'later', extension: '1012', password: 'later-sip-secret', sim: { terminals: [{ answer_after: 8, hangup_after: 4 }] } },
  )
}

/** A client of the simulator's event socket of our own, to read a channel's variables. */
async function eslClient(t: Test, stack: FaultStack) {
  const pbx = connectPbx({ host: '127.0.0.1', port: stack.eslPort, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(() => pbx.close())
  await waitFor('our ESL client connected', () => pbx.isConnected())
  return pbx
}

/** The leg carries its hangup record hook (the originate sets it: pbx/commands.ts hangupRecordVar). */
async function hookSet(pbx: Awaited<ReturnType<typeof eslClient>>, uuid: string): Promise<void> {
  const cmd = commands.uuidGetVar(uuid, 'api_hangup_hook')
  if (!cmd.ok) throw new Error('uuid_getvar')
  await waitFor(`the hangup hook of ${uuid}`, async () => {
    const r = await pbx.bgapi(cmd.value, 2000)
    return r.ok && r.value.startsWith('hash insert/')
  })
}

const resultsOf = (rx: FaultyReceiver, requestId: string) =>
  rx.received.filter((r) => r.requestId === requestId && r.status >= 200 && r.status < 300).map((r) => JSON.parse(r.body) as Record<string, unknown>)

t.test('SIGKILL: a live call is adopted, calls that ended are read from their records, exactly one result each', async (t) => {
  const stack = await faultStack(t, { domainEdit: addUsers, callbacks: { backoff_initial_ms: 50, backoff_max_ms: 200 } })
  const rx = await faultyReceiver(t)
  await stack.startSim()
  const first = await stack.startDaemon()
  const pbx = await eslClient(t, stack)

  // (a) rings 15 s; (b1) answers after 0.8 s and hangs up 0.4 s later; (b2) rings out after 1 s.
  // answer_timeout 600 (60 s under the simulator's time scale): FreeSWITCH would end it at its originate_timeout.
  const live = await stack.call('call_user', { user_name: 'slow', destination: 'callee', callback_url: rx.url, answer_timeout: 600 })
  const answeredThenEnded = await stack.call('call_user', { user_name: 'later', destination: 'brief', callback_url: rx.url })
  const ringOut = await stack.call('call_user', { user_name: 'ring', destination: 'callee', callback_url: rx.url, answer_timeout: 15 })
  for (const r of [live, answeredThenEnded, ringOut]) t.equal(r.status, 200, `placed: ${JSON.stringify(r.json)}`)
  const uuids = [live, answeredThenEnded, ringOut].map((r) => r.json?.uuids?.[0] ?? '')
  for (const u of uuids) await hookSet(pbx, u)

  first.signal('SIGKILL')
  await first.exited
  // While no daemon runs: (b1) answers and hangs up, (b2) rings out (originate_timeout 15 = 1.5 s).
  await waitFor('the ended calls gone from FreeSWITCH', () => !stack.observer.live.has(uuids[1] as string) && !stack.observer.live.has(uuids[2] as string), 10000)
  t.ok(stack.observer.live.has(uuids[0] as string), '(a) still ringing')
  t.equal(rx.received.length, 0, 'no result was sent before the kill')

  const second = await stack.startDaemon()
  const summary = await second.waitLog('recovery done', 1, 20000)
  t.match(summary, { fromRecords: 2, adopted: 1, unknown: 0 }, 'two from their records, one adopted')
  await waitFor('three results', () => new Set(rx.received.filter((r) => r.status === 204).map((r) => r.requestId)).size === 3, 20000)

  t.same(resultsOf(rx, answeredThenEnded.requestId), [{ result_code: 0, uuid: uuids[1] }], '(b) answered while away: answered, from its record')
  t.same(resultsOf(rx, ringOut.requestId).map((b) => (b.error as Doc | undefined)?.cause), ['NO_ANSWER'], '(b) rang out while away: its true cause')
  t.same(resultsOf(rx, live.requestId), [{ result_code: 0, uuid: uuids[0] }], '(a) adopted: answered after the restart')
  // The adopted leg's dialplan bridged it to its destination through the new daemon.
  await waitFor('the destination leg of the adopted call', () => (stack.observer.channelsByRequest.get(live.requestId) ?? 0) >= 2, 10000)
  await sleep(500)
  t.equal(rx.received.filter((r) => r.status === 204).length, 3, 'exactly one result per request')
})

t.test('SIGKILL with FreeSWITCH restarted too: no trace left, outcome_unknown', async (t) => {
  const stack = await faultStack(t, { domainEdit: addUsers })
  const rx = await faultyReceiver(t)
  const sim = await stack.startSim()
  const first = await stack.startDaemon()
  const r = await stack.call('call_user', { user_name: 'slow', destination: 'callee', callback_url: rx.url, answer_timeout: 60 })
  t.equal(r.status, 200)
  first.signal('SIGKILL')
  await first.exited
  sim.signal('SIGKILL')
  await sim.exited
  await stack.startSim()
  await stack.startDaemon()
  await waitFor('a result', () => rx.received.some((x) => x.status === 204), 20000)
  await sleep(300)
  t.same(resultsOf(rx, r.requestId), [{ result_code: 500, error: { id: 'outcome_unknown', cause: 'UNKNOWN' } }], 'outcome_unknown, once')
})
