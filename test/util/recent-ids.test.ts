import t from 'tap'
import { RecentIds } from '../../src/util/recent-ids.js'

t.test('an id is forgotten once it is older than the ttl, not before', async (t) => {
  const ids = new RecentIds(1000, 100)
  ids.add('a', 0)
  ids.add('b', 500)
  ids.add('c', 999)
  t.ok(ids.has('a'), 'a at 999 ms old is still seen')
  ids.add('d', 1000)
  t.notOk(ids.has('a'), 'a at 1000 ms old is forgotten')
  t.ok(ids.has('b'))
  ids.add('e', 1600)
  t.same(['a', 'b', 'c', 'd', 'e'].filter((id) => ids.has(id)), ['c', 'd', 'e'])
  t.equal(ids.size, 3)
})

t.test('over capacity the oldest go first, whatever their age', async (t) => {
  const ids = new RecentIds(60_000, 3)
  for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) ids.add(id, i)
  t.same(['a', 'b', 'c', 'd', 'e'].filter((id) => ids.has(id)), ['c', 'd', 'e'])
  t.equal(ids.size, 3)
})

t.test('adding an id again starts its age over', async (t) => {
  const ids = new RecentIds(1000, 100)
  ids.add('a', 0)
  ids.add('b', 100)
  ids.add('a', 900)
  ids.add('c', 1200)
  t.ok(ids.has('a'), 'a was seen again at 900')
  t.notOk(ids.has('b'))
})

t.test('a clock stepped back keeps the ids after it a little longer, and forgets nothing early', async (t) => {
  const ids = new RecentIds(1000, 100)
  ids.add('a', 5000)
  ids.add('b', 4000) // the wall clock went back a second
  ids.add('c', 5500)
  t.ok(ids.has('b'), 'already 1500 ms old at 5500, but behind a, which is not: kept')
  ids.add('d', 5900)
  t.ok(ids.has('a') && ids.has('c') && ids.has('d'))
  ids.add('e', 6000)
  t.same(['a', 'b', 'c', 'd', 'e'].filter((id) => ids.has(id)), ['c', 'd', 'e'])
})

t.test('an id forgotten on purpose is not seen, the others are', async (t) => {
  const ids = new RecentIds(1000, 100)
  ids.add('a', 0)
  ids.add('b', 1)
  ids.forget('a')
  ids.forget('never-added')
  t.notOk(ids.has('a'))
  t.ok(ids.has('b'))
  t.equal(ids.size, 1)
})
