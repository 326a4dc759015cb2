/**
 * Issue 31 item 2 on the real switch: waiting for a free channel (wait_ms) under the lane's
 * channel_limit of 4. Two calls of two channels each (a carrier number connected to bob) fill the
 * domain; a third that may wait 15 s waits, nothing of it created, and is placed once the first
 * call ends; a fourth that may wait only 600 ms is refused `channel_limit_reached` after its wait
 * with nothing created. FreeSWITCH's own events say the domain never had more than 4 channels.
 * lane.realfs.ts calls waitForChannels with its real world; the simulator's side is
 * test/e2e/wait.test.ts.
 */
import type { Test } from 'tap'
import type { RecordedEvent } from './esl-tap.js'
import { waitUntil, type RealWorld } from './world.js'

/** The most channels FreeSWITCH had at once among these events (CREATE up, DESTROY down). */
function peakChannels(events: readonly RecordedEvent[]): number {
  let live = 0
  let peak = 0
  for (const e of events) {
    if (e.name === 'CHANNEL_CREATE') peak = Math.max(peak, ++live)
    else if (e.name === 'CHANNEL_DESTROY') live--
  }
  return peak
}

export async function waitForChannels(t: Test, real: RealWorld): Promise<void> {
  await real.idle()
  const from = real.tap.events.length
  const since = () => real.tap.events.slice(from)
  const bridgeOf = async (uuid: string) =>
    waitUntil(`the bridge of ${uuid.slice(0, 8)}`, () => since().find((e) => e.name === 'CHANNEL_BRIDGE' && (e.headers['Unique-ID'] === uuid || e.headers['Bridge-A-Unique-ID'] === uuid)), 15_000)
  const call = (target: string, waitMs?: number) => real.post('call_external', { target, destination: 'bob', ...(waitMs !== undefined ? { wait_ms: waitMs } : {}) })
  const uuidOf = (r: { body: Record<string, unknown> }): string => (r.body['uuids'] as string[] | undefined)?.[0] ?? ''

  const first = await call('0399990000')
  const second = await call('0399990001')
  t.same([first.status, second.status], [200, 200], 'two calls of two channels fill the limit of 4')
  await bridgeOf(uuidOf(first))
  await bridgeOf(uuidOf(second))

  const waitingSince = Date.now()
  let thirdDone = false
  const third = call('0399990002', 15_000).then((r) => {
    thirdDone = true
    return r
  })
  const late = Date.now()
  const fourth = await call('0399990003', 600)
  t.equal(fourth.status, 429, 'a request that may wait only 600 ms')
  t.match(fourth.body['error'], { id: 'channel_limit_reached', description: /after waiting 600 ms/ })
  t.ok(Date.now() - late >= 590, `answered after its wait (${Date.now() - late} ms)`)
  t.notOk(thirdDone, 'the third still waits')
  t.equal(since().filter((e) => e.name === 'CHANNEL_CREATE').length, 4, 'nothing of the waiting or the refused request was created')

  await real.remoteHangup(uuidOf(first))
  const placed = await third
  t.equal(placed.status, 200, `the waiting request is placed once the first call ended (after ${Date.now() - waitingSince} ms)`)
  await bridgeOf(uuidOf(placed))
  t.ok(peakChannels(since()) <= 4, `FreeSWITCH never had more than the limit (peak ${peakChannels(since())} of 4)`)
  await real.remoteHangup(uuidOf(second))
  await real.remoteHangup(uuidOf(placed))
  await real.idle()
}
