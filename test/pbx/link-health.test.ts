import t from 'tap'
import { LinkHealth } from '../../src/pbx/link-health.js'

const opts = { idleProbeMs: 250, quietAfterMs: 800, maxTickGapMs: 250 }

/** Ticks every `step` ms from `from` to `to` (exclusive), returning the advice of each. */
const run = (h: LinkHealth, from: number, to: number, step: number, awaiting: boolean) => {
  const out = []
  for (let now = from; now < to; now += step) out.push({ now, ...h.tick(now, awaiting) })
  return out
}

const upLink = () => {
  const h = new LinkHealth(opts)
  h.socketOpened()
  t.equal(h.usable, false, 'a new socket is not usable before it authenticated')
  h.authenticated()
  h.tick(0, false)
  return h
}

t.test('an idle link is probed after idleProbeMs of silence, and stays up while probes are answered', async (t) => {
  const h = upLink()
  const advice = run(h, 50, 300, 50, false)
  t.same(advice.filter((a) => a.probe).map((a) => a.now), [250], 'first probe at 250 ms of silence')
  h.heard()
  t.equal(h.tick(300, false).probe, false, 'the reply resets the silence')
  t.equal(h.state, 'up')
})

t.test('frozen FreeSWITCH: quiet once 800 ms passed with a reply awaited, not before', async (t) => {
  const h = upLink()
  const advice = run(h, 50, 1001, 50, true)
  const quietAt = advice.find((a) => a.becameQuiet)?.now
  t.equal(quietAt, 800, 'quiet at 800 ms of responsive silence')
  t.equal(h.state, 'quiet')
  t.equal(h.usable, false)
  t.equal(advice.filter((a) => a.becameQuiet).length, 1, 'told once')
})

t.test('silence with nothing awaited is idle, not dead', async (t) => {
  const h = upLink()
  run(h, 50, 5000, 50, false)
  t.equal(h.state, 'up')
})

t.test('bytes again on the same socket (FreeSWITCH resumed): up again', async (t) => {
  const h = upLink()
  run(h, 50, 1001, 50, true)
  t.equal(h.state, 'quiet')
  h.heard()
  t.equal(h.state, 'up')
  t.equal(h.usable, true)
})

t.test('time the daemon itself was blocked does not count (event-loop lag)', async (t) => {
  const h = upLink()
  run(h, 50, 751, 50, true) // 750 ms of silence, just under the limit
  t.equal(h.state, 'up')
  // The loop was blocked for 3 s: FreeSWITCH's replies may be sitting unread in the socket.
  const late = h.tick(3750, true)
  t.same(late, { probe: false, becameQuiet: false }, 'a late tick judges nothing')
  t.equal(h.silence, 750, 'and credits nothing')
  h.heard() // the poll phase after the block reads what FreeSWITCH sent meanwhile
  t.equal(h.tick(3800, true).becameQuiet, false)
  t.equal(h.state, 'up')
})

t.test('a daemon lagging on every tick never declares the link dead', async (t) => {
  const h = upLink()
  for (let now = 300; now < 20_000; now += 300) t.equal(h.tick(now, true).becameQuiet, false)
  t.equal(h.state, 'up')
})

t.test('lag up to maxTickGapMs still counts as responsive time', async (t) => {
  const h = upLink()
  const advice = run(h, 200, 1001, 200, true)
  t.equal(advice.find((a) => a.becameQuiet)?.now, 800)
})

t.test('socket closed: down at once; a new socket is usable only once authenticated', async (t) => {
  const h = upLink()
  h.socketClosed()
  t.equal(h.usable, false)
  t.equal(h.state, 'connecting')
  t.same(h.tick(100, true), { probe: false, becameQuiet: false }, 'no judgement without a socket')
  h.socketOpened()
  t.equal(h.usable, false)
  h.authenticated()
  t.equal(h.usable, true)
})

t.test('shutdown notice: down until a new socket authenticates; bytes do not bring it back', async (t) => {
  const h = upLink()
  h.shutdownNotice()
  t.equal(h.state, 'shutting_down')
  h.heard()
  h.authenticated()
  t.equal(h.usable, false, 'the same socket stays unusable')
  h.socketOpened()
  h.authenticated()
  t.equal(h.usable, true, 'reconnected')
})
