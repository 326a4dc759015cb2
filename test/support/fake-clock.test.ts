/**
 * test/support/fake-clock.ts: time moves only when advanced, tap's next test still starts, and a
 * wait on the fake clock is bounded by wall time.
 */
import t from 'tap'
import { withFakeClock } from './fake-clock.js'

// Three in a row, each leaving a timer pending: the next test must start on the real clock.
// (Without shouldClearNativeTimers a test after a fake-clock one sometimes never started: tap's
// clear of a real timer went to the fake clock. It did not reproduce on demand.)
for (const n of [1, 2, 3]) {
  t.test(`timers fire when time is advanced to them, not before (${n} of 3)`, (t) =>
    withFakeClock(async (clock) => {
      const fired: number[] = []
      const start = performance.now()
      setTimeout(() => fired.push(performance.now() - start), 1000)
      await clock.advance(999)
      t.same(fired, [], 'not at 999 ms')
      await clock.advance(1)
      t.same(fired, [1000], 'at 1000 ms, on the fake performance.now too')
      t.equal(clock.pending(), 0)
      // Left pending as the body ends: dropped with the fake clock.
      setTimeout(() => fired.push(-1), 1000)
      await clock.advance(500)
    }),
  )
}

t.test('runUntil fires timers while idle and gives up after its wall time, naming what it waited for', (t) =>
  withFakeClock(async (clock) => {
    let done = false
    setTimeout(() => (done = true), 60_000)
    await clock.runUntil('a minute-long timer', () => done, () => true)
    t.ok(done, 'a minute passed at once')
    await t.rejects(clock.runUntil('something that never happens', () => false, () => true, 50), /timed out after 50 ms \(wall time\) waiting for something that never happens/)
  }),
)

t.test('the real clock is back after the body', async (t) => {
  const before = Date.now()
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.ok(Date.now() - before >= 4, 'real time passes again')
})
