/**
 * The pace of originate legs (src/origination/pace.ts) on a fake clock: never more than the
 * limit in any second, first come first served, a wait bounded by its own time, a leg count
 * over the whole rate going alone; the rate kept below FreeSWITCH's; and the gate in attempt.ts
 * (through the engine): an originate over the pace waits for its turn before it is written, and
 * past its wait is refused with nothing written.
 */
import t from 'tap'
import { createChannelModel } from '../../src/channels/index.js'
import { createEngine } from '../../src/origination/engine.js'
import { createPace, DEFAULT_PACE_WAIT_MS, PACE_WINDOW_MS as W, paceBelow, type PaceEnd } from '../../src/origination/pace.js'
import { systemClock } from '../../src/util/clock.js'
import { silentLogger } from '../../src/util/logger.js'
import { withFakeClock } from '../support/fake-clock.js'
import { FakePbx, flush } from '../support/fake-pbx.js'
import { DOMAIN, RecordingSink, domainConfig, plan, runtimeWith, userOf } from './helpers.js'

t.test('the rate kept under FreeSWITCH sessions-per-second: 80 %, below what it admits, at least 1', async (t) => {
  t.equal(paceBelow(30), 24, 'vanilla 30 → 24')
  t.equal(paceBelow(100), 80)
  t.equal(paceBelow(5), 4, 'FreeSWITCH admits sps - 1 a second (35-sessions-per-second: 4 of 5)')
  t.equal(paceBelow(2), 1)
  t.equal(paceBelow(1), 1, 'never 0: the daemon still places calls, one a second')
})

t.test('within the limit at once; beyond it, its turn comes as the oldest start leaves the window', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 3 })
    t.equal((await pace.take(2, 0)).end, 'go')
    await clock.advance(400)
    t.equal((await pace.take(1, 0)).end, 'go', 'three in the second')
    t.equal((await pace.take(1, 0)).end, 'timeout', 'a fourth that may not wait is refused at once')
    let fourth: PaceEnd | undefined
    void pace.take(1, 5000).then((e) => (fourth = e.end))
    await clock.advance(W - 400 - 1)
    t.equal(fourth, undefined, 'not before the first two starts have left the window (a second and a margin)')
    await clock.advance(1)
    t.equal(fourth, 'go')
    t.equal(pace.waiting(), 0)
  })
})

t.test('a waiter whose client went away leaves the line at once; the one behind takes its turn', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 2 })
    t.equal((await pace.take(2, 0)).end, 'go', 'the window is full')
    const gone = new AbortController()
    let first: PaceEnd | undefined
    let second: PaceEnd | undefined
    void pace.take(2, 5000, gone.signal).then((e) => (first = e.end))
    void pace.take(1, 5000).then((e) => (second = e.end))
    await clock.advance(100)
    t.equal(pace.waiting(), 2)
    gone.abort()
    await flush()
    t.equal(first, 'abandoned', 'told at once, not at its deadline')
    t.equal(pace.waiting(), 1)
    await clock.advance(W - 100)
    t.equal(second, 'go', 'the next in line goes when the window frees, as if the first had never waited')
    const already = new AbortController()
    already.abort()
    t.equal((await pace.take(1, 5000, already.signal)).end, 'abandoned', 'a client already gone does not queue')
  })
})

t.test('a burst never puts more than the limit in any second', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 5 })
    const starts: number[] = []
    const ends: PaceEnd[] = []
    for (let i = 0; i < 23; i++) {
      const legs = 1 + (i % 3)
      void pace.take(legs, 60_000).then((e) => {
        ends.push(e.end)
        for (let j = 0; j < legs; j++) starts.push(performance.now())
      })
      if (i % 4 === 0) await clock.advance(130)
    }
    await clock.advance(30_000)
    t.equal(ends.length, 23)
    t.ok(ends.every((e) => e === 'go'), 'every one went in time')
    for (const s of starts) {
      const inWindow = starts.filter((x) => x >= s && x < s + W).length
      if (inWindow > 5) return t.fail(`${inWindow} starts in the window from ${s}`)
    }
    t.pass('at most 5 starts in any window (so in any of FreeSWITCH seconds)')
  })
})

t.test('first come, first served: a smaller originate does not overtake a larger one ahead of it', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 4 })
    t.equal((await pace.take(3, 0)).end, 'go')
    const order: string[] = []
    void pace.take(3, 5000).then(() => order.push('three'))
    void pace.take(1, 5000).then(() => order.push('one'))
    await clock.advance(10)
    t.same(order, [], 'the single leg would fit, but waits behind the three')
    await clock.advance(W - 10)
    t.same(order, ['three', 'one'])
  })
})

t.test('a wait ends at its bound with nothing counted, and the next in line moves up', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 2 })
    t.equal((await pace.take(2, 0)).end, 'go')
    let big: PaceEnd | undefined
    let small: PaceEnd | undefined
    void pace.take(2, 300).then((e) => (big = e.end))
    void pace.take(1, 5000).then((e) => (small = e.end))
    await clock.advance(300)
    t.equal(big, 'timeout', 'refused after its own 300 ms')
    t.equal(small, undefined)
    await clock.advance(W - 300)
    t.equal(small, 'go', 'the next one goes when the window is over')
    t.equal((await pace.take(1, 0)).end, 'go', 'the refused one took no share: one more fits in the same second')
  })
})

t.test('more legs than the whole rate go alone, in an empty second', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 3 })
    t.equal((await pace.take(1, 0)).end, 'go')
    let ten: PaceEnd | undefined
    void pace.take(10, 5000).then((e) => (ten = e.end))
    await clock.advance(W - 1)
    t.equal(ten, undefined)
    await clock.advance(1)
    t.equal(ten, 'go')
    t.equal((await pace.take(1, 0)).end, 'timeout', 'nothing else in that second')
  })
})

t.test('a start counts from when FreeSWITCH had the originate', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 1 })
    const first = await pace.take(1, 0)
    if (first.end !== 'go') return t.fail(first.end)
    let second: PaceEnd | undefined
    void pace.take(1, 10_000).then((e) => (second = e.end))
    await clock.advance(500)
    first.written() // the ESL socket carried it only now
    await clock.advance(W - 500)
    t.equal(second, undefined, 'not a window after its turn')
    await clock.advance(500)
    t.equal(second, 'go', 'a window after FreeSWITCH had it')
  })
})

t.test('an originate never written frees its share at once', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 1 })
    const first = await pace.take(1, 0)
    if (first.end !== 'go') return t.fail(first.end)
    let next: PaceEnd | undefined
    void pace.take(1, 10_000).then((e) => (next = e.end))
    await clock.advance(10)
    t.equal(next, undefined)
    first.unused()
    await clock.advance(0)
    t.equal(next, 'go', 'the waiter goes without waiting out the window')
  })
})

t.test('the limit is read at each take; close tells every waiter', async (t) => {
  await withFakeClock(async () => {
    let limit = 1
    const pace = createPace({ clock: systemClock, limit: () => limit })
    t.equal((await pace.take(1, 0)).end, 'go')
    t.equal((await pace.take(1, 0)).end, 'timeout')
    limit = 2
    t.equal((await pace.take(1, 0)).end, 'go', 'a raised limit applies at once')
    const waiting = pace.take(1, 5000)
    pace.close()
    t.equal((await waiting).end, 'closed')
    t.equal((await pace.take(1, 0)).end, 'closed')
  })
})

t.test('a timeScale makes FreeSWITCH second shorter (a sped-up simulator)', async (t) => {
  await withFakeClock(async (clock) => {
    const pace = createPace({ clock: systemClock, limit: () => 1, timeScale: 0.1 })
    t.equal((await pace.take(1, 0)).end, 'go')
    let next: PaceEnd | undefined
    void pace.take(1, 5000).then((e) => (next = e.end))
    await clock.advance(W / 10)
    t.equal(next, 'go', 'the window of a simulated second is a tenth')
  })
})

/** An engine on a fake FreeSWITCH whose `fsctl sps` answers `sps`, alice with one terminal. */
function engineWith(sps: number | undefined, daemonOver: { max_originates_per_second?: number } = {}) {
  const pbx = new FakePbx()
  const base = FakePbx.prototype.bgapi
  pbx.bgapi = function (command, timeoutMs) {
    if (command === 'fsctl sps' && sps !== undefined) {
      this.commands.push(command)
      return Promise.resolve({ ok: true, value: `+OK sessions per second: ${sps}\n` })
    }
    return base.call(this, command, timeoutMs)
  }
  const rt0 = runtimeWith([domainConfig({ channel_limit: 100 })])
  const rt = { ...rt0, config: { ...rt0.config, daemon: { ...rt0.config.daemon, freeswitch: { ...rt0.config.daemon.freeswitch, ...daemonOver } } } }
  const engine = createEngine({
    pbx,
    channels: createChannelModel({ pbx, logger: silentLogger(), directory: () => rt.directory }),
    runtime: () => rt,
    callbacks: new RecordingSink(),
    logger: silentLogger(),
    sipProfile: 'internal',
    huntConcurrency: 4,
  })
  pbx.contacts.set(`alice@${DOMAIN}`, ['sofia/internal/sip:alice@127.0.0.1:5071'])
  return { pbx, rt, engine }
}

t.test('the engine paces below the FreeSWITCH rate it read: a request over it waits its turn, then is written', async (t) => {
  await withFakeClock(async (clock) => {
    // fsctl sps 5 → 4 legs a second.
    const { pbx, rt, engine } = engineWith(5)
    await flush()
    t.ok(pbx.commands.includes('fsctl sps'), 'the rate is read at connection')
    const replies = Array.from({ length: 6 }, () => engine.originate(plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false })))
    await flush()
    t.equal(pbx.originates().length, 4, 'four written at once, the rest wait')
    t.equal(engine.waitFigures().pacedNow, 2, 'two waiting for their turn (cod_originates_waiting_for_pace)')
    await clock.advance(W - 1)
    t.equal(pbx.originates().length, 4, 'nothing more within the window')
    await clock.advance(1)
    await flush()
    t.equal(pbx.originates().length, 6, 'the other two once the window is over')
    t.equal(engine.waitFigures().pacedNow, 0)
    for (const r of await Promise.all(replies)) t.ok(r.ok, 'each placed')
    await engine.close()
  })
})

t.test('past its wait an originate is refused channel_limit_reached, nothing written, its channels freed', async (t) => {
  await withFakeClock(async (clock) => {
    const { pbx, rt, engine } = engineWith(undefined, { max_originates_per_second: 1 })
    const call = (waitMs?: number) => engine.originate(plan({ kind: 'user', user: userOf(rt, 'alice'), autoAnswer: false }, waitMs === undefined ? {} : { waitMs }))
    const first = call()
    await flush()
    // Turns at +W and +2W (2.2 s) for the two that may wait 10 s; the default 2 s ends before.
    const second = call(10_000)
    const third = call(10_000)
    const refused = call()
    await flush()
    t.equal(pbx.originates().length, 1, 'the configured rate, not the vanilla default')
    await clock.advance(W)
    await flush()
    t.equal(pbx.originates().length, 2, 'the next one a window later')
    await clock.advance(DEFAULT_PACE_WAIT_MS - W)
    await flush()
    const r = await refused
    t.equal(r.ok ? 'placed' : r.error.reason, 'channel_limit_reached', 'no turn within the default wait')
    t.match(r.ok ? '' : r.error.description, /1 originate legs per second/)
    t.equal(pbx.originates().length, 2, 'the refused one was never written')
    await clock.advance(2 * W - DEFAULT_PACE_WAIT_MS)
    await flush()
    for (const p of [first, second, third]) t.ok((await p).ok, 'the others are placed')
    t.equal(pbx.originates().length, 3)
    t.equal(engine.inUse(DOMAIN), 3 * 2, 'the refused request holds no channel (three placed: a leg and its destination each)')
    await engine.close()
  })
})
