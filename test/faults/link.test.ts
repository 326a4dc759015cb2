/**
 * Fault suite from outside (issue 11, the table's FreeSWITCH rows): the simulator in a process of
 * its own is frozen (SIGSTOP 8 s), killed and restarted, and shut down (`fsctl shutdown`), while
 * clients keep placing two-leg calls. An independent ESL observer records which request ids ever
 * got a channel. Promises checked:
 * - /healthz answers 503 within 1 s of the simulator being killed, frozen, or announcing its shutdown;
 * - an error reply means no call: no request answered non-200 ever gets a channel, even after
 *   the frozen switch wakes up and runs what it had received (requests whose connection died
 *   without a reply would be "unknown" and excluded; here the daemon lives, so there are none);
 * - 0 lost results: every request answered 200 gets its result, whatever became of its channels.
 * (test/faults/esl-drop.test.ts and sim-restart.test.ts cover the in-process drop and restart.)
 */
import t from 'tap'
import { Ledger, describe, errorRepliesRung, lostResults, repeatsBroken } from './harness/ledger.js'
import { faultyReceiver } from './harness/receiver.js'
import { faultStack, sleep, waitFor, type FaultStack } from './harness/stack.js'
import { runLoad } from './harness/ledger.js'

t.setTimeout(150000)

/**
 * Milliseconds from now until a /healthz probe (one every 25 ms) is answered with something else
 * than 200, counted to the moment that probe was sent, as a load balancer probing then would see
 * it (the probe's own round trip on a saturated machine is not the daemon's detection time);
 * -1 when none within `ms`.
 */
async function msUntilUnhealthy(stack: FaultStack, ms = 5000): Promise<number> {
  const start = Date.now()
  while (Date.now() - start < ms) {
    const sentAt = Date.now()
    if ((await stack.healthz()) !== 200) return sentAt - start
    await sleep(25)
  }
  return -1
}

const twoLegCall = (url: string) => ({ op: 'call_user', body: { user_name: 'caller', destination: 'callee', callback_url: url } })

t.test('simulator frozen 8 s, then killed and restarted, under load: 503 within 1 s, 0 error replies rung, 0 lost', async (t) => {
  const receiver = await faultyReceiver(t, 'accept')
  const stack = await faultStack(t, { channelLimit: 40 })
  await stack.startSim()
  await stack.startDaemon()
  const ledger = new Ledger()
  let loading = true
  const load = runLoad(stack, ledger, { workers: 6, stop: () => !loading, request: () => twoLegCall(receiver.url), pauseMs: 20 })

  await sleep(2000)
  const beforeFreeze = ledger.sent.length
  stack.sim?.signal('SIGSTOP')
  const frozenMs = await msUntilUnhealthy(stack)
  await sleep(8000 - Math.max(frozenMs, 0))
  // The promise is 1 s of the daemon's responsive time: on a machine busy with other work (CI runs
  // test files side by side) the daemon may not run for a while. Its "link quiet" line says how
  // long it went without a byte in wall time and in time it could run; the difference is set apart.
  const quiet = stack.daemonLogs('FreeSWITCH link quiet: no byte while a reply is awaited; no more commands until it answers').at(-1)
  const blockedMs = quiet === undefined ? 0 : Math.max(0, Number(quiet.sinceLastByteMs ?? 0) - Number(quiet.silenceMs ?? 0))
  stack.sim?.signal('SIGCONT')
  const duringFreeze = ledger.sent.length - beforeFreeze
  await waitFor('/healthz 200 after the thaw', async () => (await stack.healthz()) === 200, 15000)
  await sleep(2000)

  await stack.sim?.kill()
  const killedMs = await msUntilUnhealthy(stack)
  await sleep(1000)
  await stack.startSim()
  await waitFor('/healthz 200 after the restart', async () => (await stack.healthz()) === 200, 15000)
  await sleep(2000)
  loading = false
  await load

  // Everything ends within seconds (calls talk 1.5 s); results follow.
  await waitFor('no live channel', () => stack.observer.live.size === 0, 15000).catch(() => undefined)
  await waitFor('every result accepted', () => lostResults(ledger, receiver).length === 0, 20000).catch(() => undefined)

  const rung = errorRepliesRung(ledger, stack.observer)
  const lost = lostResults(ledger, receiver)
  t.ok(
    frozenMs >= 0 && frozenMs - blockedMs <= 1000,
    `/healthz 503 within 1 s of the freeze (${frozenMs} ms, of which ${blockedMs} ms the daemon could not run)`,
  )
  t.ok(killedMs >= 0 && killedMs <= 1000, `/healthz 503 within 1 s of the kill (${killedMs} ms)`)
  t.ok(ledger.accepted.length > 0 && ledger.errorAnswered.length > 0, 'the load saw both accepted and refused requests')
  t.same(rung.map(describe), [], `0 error-answered requests rung (${rung.length} of ${ledger.errorAnswered.length})`)
  t.same(lost.map(describe), [], `0 results lost (${lost.length} of ${ledger.accepted.length})`)
  t.same(repeatsBroken(receiver), [], 'repeats only with the same delivery id')
  t.equal(ledger.unknown.length, 0, 'every request got a reply (the daemon never died here)')
  t.comment(
    `figures: ${JSON.stringify({
      requests: ledger.sent.length,
      sentWhileFrozen: duringFreeze,
      replies: ledger.statusCounts(),
      errorAnsweredRung: rung.length,
      resultsLost: lost.length,
      msTo503: { frozen: frozenMs, killed: killedMs },
      channelsSeen: stack.observer.created,
    })}`,
  )
  await stack.daemon?.stop()
  await stack.sim?.stop()
})

t.test('simulator announces its shutdown (fsctl shutdown): 503 pbx_unavailable from the notice on, within 1 s', async (t) => {
  const stack = await faultStack(t)
  await stack.startSim()
  await stack.startDaemon()
  t.equal((await stack.call('call_user', { user_name: 'brief', destination: '0311112222' })).status, 200, 'a call before the notice is placed')
  // What an operator types (fs_cli: fsctl shutdown), sent on the observer's own socket.
  stack.observer.sendApi('fsctl shutdown')
  const ms = await msUntilUnhealthy(stack, 3000)
  t.ok(ms >= 0 && ms <= 1000, `/healthz 503 within 1 s of the shutdown notice (${ms < 0 ? 'still 200 after 3 s' : `${ms} ms`})`)
  const after = await stack.call('call_user', { user_name: 'brief', destination: '0311112222' })
  t.same([after.status, after.json?.error?.id], [503, 'pbx_unavailable'], 'a request after the notice: 503 pbx_unavailable')
  const rung = stack.observer.rungRequestIds.has(after.requestId)
  t.notOk(rung, 'and no channel for it')
  t.comment(`figures: ${JSON.stringify({ msTo503AfterNotice: ms, replyAfterNotice: after.status })}`)
  await stack.daemon?.stop()
  await stack.sim?.kill()
})
