/**
 * The channel samples of the live calls page's chart (src/channels/channel-samples.ts), on a
 * fake clock: one sample per domain every interval with the limit in force then, one hour kept,
 * a domain removed by a reload forgotten, nothing after stop.
 */
import t from 'tap'
import { createChannelSamples } from '../../src/channels/channel-samples.js'
import { systemClock } from '../../src/util/clock.js'
import { withFakeClock } from '../support/fake-clock.js'

t.test('every 10 s, one hour kept per domain, reloads followed', async (t) => {
  await withFakeClock(async (clock) => {
    const live = new Map<string, number>([['a.test', 3], ['b.test', 0]])
    let domains = [
      { name: 'A.test', channelLimit: 10 },
      { name: 'b.test', channelLimit: 4 },
    ]
    const samples = createChannelSamples({ channels: { liveCount: (d) => live.get(d) ?? 0 }, domains: () => domains, clock: systemClock, now: Date.now })
    const start = clock.now()
    t.same(samples.of('a.test'), [], 'nothing before the first interval')
    await clock.advance(10_000)
    t.same(samples.of('a.test'), [{ at: start + 10_000, live: 3, limit: 10 }], 'the live count and the limit, dated')
    t.same(samples.of('B.TEST'), [{ at: start + 10_000, live: 0, limit: 4 }])
    live.set('a.test', 7)
    domains = [{ name: 'A.test', channelLimit: 12 }]
    await clock.advance(10_000)
    t.same(samples.of('a.test').at(-1), { at: start + 20_000, live: 7, limit: 12 }, 'a reload shows at the next sample')
    t.same(samples.of('b.test'), [], 'a removed domain is forgotten')
    await clock.advance(2 * 3_600_000)
    const hour = samples.of('a.test')
    t.equal(hour.length, 360, 'one hour of 10 s samples')
    t.equal(hour[0]?.at, clock.now() - 3_600_000 + 10_000, 'the oldest is less than an hour old')
    t.equal(hour.at(-1)?.at, clock.now())
    samples.stop()
    await clock.advance(60_000)
    t.equal(samples.of('a.test').at(-1)?.at, clock.now() - 60_000, 'no sample after stop')
    t.equal(clock.pending(), 0, 'no timer left')
  })
})
