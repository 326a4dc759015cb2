/**
 * Waiting for a free channel (src/origination/channel-wait.ts) on a fake clock: first come, first
 * served; the wait ends at its time with nothing taken; a full line refuses at once; a request
 * that gives up leaves the line and lets the next one through; nobody overtakes a waiter.
 */
import t from 'tap'
import { ChannelWaits } from '../../src/origination/channel-wait.js'
import { systemClock } from '../../src/util/clock.js'
import { withFakeClock } from '../support/fake-clock.js'

/** A domain with `free` channels; each taker needs one. */
const pool = (free: number) => {
  const state = { free, taken: [] as string[] }
  return {
    state,
    taker: (name: string) => () => {
      if (state.free <= 0) return false
      state.free -= 1
      state.taken.push(name)
      return true
    },
  }
}

t.test('first come, first served: the oldest waiter gets the channel that frees', async (t) => {
  await withFakeClock(async (clock) => {
    const waits = new ChannelWaits(systemClock)
    const p = pool(0)
    const a = waits.wait('d.test', 5000, 10, p.taker('a'))
    const b = waits.wait('D.TEST', 5000, 10, p.taker('b'))
    t.equal(waits.waiting('d.test'), 2, 'two wait (the domain in any case)')
    t.notOk(waits.mayTakeWithoutWaiting('d.test'), 'a request that does not wait may not take a channel ahead of them')
    p.state.free = 1
    waits.poke('d.test')
    t.equal(await a, 'taken')
    t.same(p.state.taken, ['a'])
    await clock.advance(1000)
    t.equal(waits.waiting('d.test'), 1)
    p.state.free = 1
    await clock.advance(150) // no poke: the retry timer finds it
    t.equal(await b, 'taken')
    t.same(p.state.taken, ['a', 'b'])
    t.ok(waits.mayTakeWithoutWaiting('d.test'))
    t.equal(clock.pending(), 0, 'no timer left once nobody waits')
  })
})

t.test('the wait ends at its time with nothing taken, and the next in line moves up', async (t) => {
  await withFakeClock(async (clock) => {
    const waits = new ChannelWaits(systemClock)
    const p = pool(0)
    const short = waits.wait('d.test', 1000, 10, p.taker('short'))
    const long = waits.wait('d.test', 10_000, 10, p.taker('long'))
    await clock.advance(1000)
    t.equal(await short, 'timeout')
    t.equal(waits.waiting('d.test'), 1)
    p.state.free = 1
    await clock.advance(100)
    t.equal(await long, 'taken')
    t.same(p.state.taken, ['long'], 'the one that timed out took nothing')
  })
})

t.test('a full line refuses at once; an abandoned wait leaves it', async (t) => {
  await withFakeClock(async (clock) => {
    const waits = new ChannelWaits(systemClock)
    const p = pool(0)
    const gone = new AbortController()
    const first = waits.wait('d.test', 5000, 2, p.taker('first'), gone.signal)
    const second = waits.wait('d.test', 5000, 2, p.taker('second'))
    t.equal(await waits.wait('d.test', 5000, 2, p.taker('third')), 'full', 'two wait already: refused at once')
    const elsewhere = waits.wait('other.test', 1000, 2, p.taker('elsewhere'))
    t.equal(waits.waiting('other.test'), 1, 'another domain has a line of its own')
    gone.abort()
    t.equal(await first, 'abandoned')
    p.state.free = 1
    await clock.advance(100)
    t.equal(await second, 'taken')
    t.same(p.state.taken, ['second'])
    t.equal(await waits.wait('d.test', 5000, 2, p.taker('late'), AbortSignal.abort()), 'abandoned', 'already gone: never queued')
    await clock.advance(1000)
    t.equal(await elsewhere, 'timeout')
  })
})

t.test('close ends every wait as abandoned', async (t) => {
  await withFakeClock(async (clock) => {
    const waits = new ChannelWaits(systemClock)
    const p = pool(0)
    const a = waits.wait('d.test', 5000, 10, p.taker('a'))
    waits.close()
    t.equal(await a, 'abandoned')
    t.equal(clock.pending(), 0)
  })
})
