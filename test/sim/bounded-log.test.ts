/** The simulator's histories keep only their latest entries (src/sim/core/bounded-log.ts): a long-running sandbox does not grow with every call. */
import t from 'tap'
import { BoundedLog } from '../../src/sim/core/bounded-log.js'

t.test('keeps every entry up to twice its capacity, then the latest capacity ones, in order', async (t) => {
  const log = new BoundedLog<number>(3)
  for (let i = 0; i < 5; i++) log.push(i)
  t.same(log.entries(), [0, 1, 2, 3, 4], 'nothing trimmed below twice the capacity')
  log.push(5)
  t.same(log.entries(), [3, 4, 5], 'the oldest go once it reaches twice the capacity')
  t.equal(log.dropped, 3)
  for (let i = 6; i < 1000; i++) log.push(i)
  t.ok(log.length <= 6, `bounded: ${log.length}`)
  t.equal(log.entries().at(-1), 999, 'the newest is always there')
  t.same(log.filter((n) => n % 2 === 0).at(-1), 998)
  t.equal(log.dropped + log.length, 1000, 'every entry is either kept or counted as dropped')
})

t.test('a capacity that is not a positive integer is refused', async (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => new BoundedLog(bad), RangeError, String(bad))
})
