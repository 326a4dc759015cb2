import t from 'tap'
import { ChannelLimiter } from '../../src/origination/channel-limit.js'

t.test('admits up to the limit, all or nothing, per domain', async (t) => {
  let live = 2
  const l = new ChannelLimiter((d) => (d === 'a.test' ? live : 0))
  t.equal(l.tryReserve('A.test', 5, ['x', 'y']), true, 'domains are case-insensitive')
  t.equal(l.inUse('a.test'), 4)
  t.equal(l.tryReserve('a.test', 5, ['z', 'w']), false, 'two do not fit in one')
  t.equal(l.inUse('a.test'), 4, 'a refused request reserves nothing')
  t.equal(l.tryReserve('a.test', 5, ['z']), true)
  t.equal(l.tryReserve('b.test', 1, ['q']), true, 'other domains are independent')
  t.equal(l.tryReserve('b.test', 1, ['r']), false)
  // A leg is created: its reservation becomes a live channel.
  l.release('x')
  live = 3
  t.equal(l.inUse('a.test'), 5)
  l.release('y', 'z', 'unknown')
  t.equal(l.reservedCount('a.test'), 0)
  t.equal(l.tryReserve('a.test', 5, ['m', 'n']), true)
  t.equal(l.tryReserve('a.test', 0, []), false, 'a limit of 0 admits nothing once channels exist')
})
