/** ChannelLimiter: originator legs reserved per UUID, destination legs held per request (src/origination/channel-limit.ts). */
import t from 'tap'
import { ChannelLimiter, type LimitChannel, type LimitChannels } from '../../src/origination/channel-limit.js'

/** A hand-driven stand-in for the channel model. */
function fakeChannels(): LimitChannels & { live: Map<string, number>; legs: Map<string, boolean>; dest: Map<string, string[]> } {
  const live = new Map<string, number>()
  const legs = new Map<string, boolean>()
  const dest = new Map<string, string[]>()
  return {
    live,
    legs,
    dest,
    liveCount: (d) => live.get(d) ?? 0,
    isLive: (uuid) => legs.get(uuid),
    liveDestinationLegs: (id) => dest.get(id) ?? [],
  }
}

/** A change of one destination leg of request `requestId`, as the channel model reports it. */
const destLeg = (uuid: string, requestId: string, live: boolean): LimitChannel => ({ uuid, requestId, role: 'destination', state: live ? 'answered' : 'hangup' })

t.test('admits up to the limit, all or nothing, per domain', async (t) => {
  const ch = fakeChannels()
  ch.live.set('a.test', 2)
  const l = new ChannelLimiter({ channels: ch, inFlight: () => true })
  t.equal(l.tryReserve('A.test', 5, { uuids: ['x', 'y'] }), true, 'domains are case-insensitive')
  t.equal(l.inUse('a.test'), 4)
  t.equal(l.tryReserve('a.test', 5, { uuids: ['z', 'w'] }), false, 'two do not fit in one')
  t.equal(l.inUse('a.test'), 4, 'a refused request reserves nothing')
  t.equal(l.tryReserve('a.test', 5, { uuids: ['z'] }), true)
  t.equal(l.tryReserve('b.test', 1, { uuids: ['q'] }), true, 'other domains are independent')
  t.equal(l.tryReserve('b.test', 1, { uuids: ['r'] }), false)
  // A leg is created: its reservation becomes a live channel.
  l.release('x')
  ch.live.set('a.test', 3)
  t.equal(l.inUse('a.test'), 5)
  l.release('y', 'z', 'unknown')
  t.equal(l.reservedCount('a.test'), 0)
  t.equal(l.tryReserve('a.test', 5, { uuids: ['m', 'n'] }), true)
  t.equal(l.tryReserve('a.test', 0, { uuids: [] }), false, 'a limit of 0 admits nothing once channels exist')
})

t.test('a destination hold counts with the originator legs, all or nothing', async (t) => {
  const ch = fakeChannels()
  const l = new ChannelLimiter({ channels: ch, inFlight: () => true })
  t.equal(l.tryReserve('a.test', 4, { uuids: ['o1'], destination: { requestId: 'r1', slots: 2 } }), true)
  t.equal(l.inUse('a.test'), 3, 'one originator leg + two destination legs')
  t.equal(l.tryReserve('a.test', 4, { uuids: ['o2'], destination: { requestId: 'r2', slots: 1 } }), false, 'two more do not fit in one')
  t.equal(l.destinationSlots('r2'), undefined, 'a refused request holds nothing')
  t.equal(l.destinationSlots('r1'), 2)
  t.equal(l.tryReserve('a.test', 4, { uuids: ['o3'] }), true, 'a leg alone fits')
})

t.test('live destination legs take their slot over; a slot comes back when a leg ends', async (t) => {
  const ch = fakeChannels()
  const l = new ChannelLimiter({ channels: ch, inFlight: () => true })
  t.ok(l.tryReserve('a.test', 10, { uuids: ['o1'], destination: { requestId: 'r1', slots: 2 } }))
  // The originator leg is created and answers.
  l.release('o1')
  ch.live.set('a.test', 1)
  ch.legs.set('o1', true)
  l.bindWinner('r1', 'o1')
  t.equal(l.inUse('a.test'), 3, 'the answered leg + the two destination slots')
  // The dialplan's bridge creates both destination legs: they are live, the hold is full.
  ch.live.set('a.test', 3)
  l.channelChanged(destLeg('d1', 'r1', true))
  l.channelChanged(destLeg('d2', 'r1', true))
  l.channelChanged(destLeg('d2', 'r1', true))
  t.equal(l.inUse('a.test'), 3, 'not counted twice (nor a change seen twice)')
  // One rings out (a hunt's member gives up): its slot is held again for the next.
  ch.live.set('a.test', 2)
  l.channelChanged(destLeg('d2', 'r1', false))
  t.equal(l.inUse('a.test'), 3)
  // More destination legs than held (a terminal registered late): counted as live, never negative.
  ch.live.set('a.test', 4)
  l.channelChanged(destLeg('d3', 'r1', true))
  l.channelChanged(destLeg('d4', 'r1', true))
  t.equal(l.inUse('a.test'), 4)
  // Legs of other requests, or not destination legs, change nothing.
  l.channelChanged({ uuid: 'x', requestId: 'r1', role: 'originator', state: 'hangup' })
  l.channelChanged(destLeg('y', 'other', true))
  t.equal(l.reservedCount('a.test'), 0)
})

t.test('a hold ends when the answered leg hangs up, when nothing answered, or when the request is refused', async (t) => {
  const ch = fakeChannels()
  const inFlight = new Set(['r1', 'r2', 'r3'])
  const l = new ChannelLimiter({ channels: ch, inFlight: (id) => inFlight.has(id) })
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r1', slots: 1 } }))
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r2', slots: 1 } }))
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r3', slots: 1 } }))
  t.equal(l.reservedCount('a.test'), 3)
  ch.legs.set('w1', true)
  l.bindWinner('r1', 'w1')
  inFlight.delete('r1')
  l.sweep()
  t.equal(l.reservedCount('a.test'), 3, 'answered: held while the answered leg lives')
  ch.legs.set('w1', false)
  l.channelChanged({ uuid: 'w1', requestId: 'r1', role: 'originator', state: 'hangup' })
  t.equal(l.reservedCount('a.test'), 2, 'the answered leg hung up')
  l.dropHold('r2')
  t.equal(l.reservedCount('a.test'), 1, 'not answered')
  inFlight.delete('r3')
  t.equal(l.reservedCount('a.test'), 1, 'until the sweep...')
  l.sweep()
  t.equal(l.reservedCount('a.test'), 0, '...a request no longer in flight and never answered holds nothing (leak guard)')
  ch.legs.set('gone', false)
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r4', slots: 1 } }))
  l.bindWinner('r4', 'gone')
  t.equal(l.reservedCount('a.test'), 0, 'bound to a leg that is hung up already: nothing held')
})

t.test('a new hold starts from the destination legs live already', async (t) => {
  const ch = fakeChannels()
  ch.dest.set('r1', ['d1'])
  const l = new ChannelLimiter({ channels: ch, inFlight: () => true })
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r1', slots: 2 } }))
  t.equal(l.reservedCount('a.test'), 1)
  l.channelChanged(destLeg('d1', 'r1', false))
  t.equal(l.reservedCount('a.test'), 2)
})

t.test('an answered leg the channel model does not know keeps the hold a while, one that it forgot ends it', async (t) => {
  const ch = fakeChannels()
  let now = 0
  const l = new ChannelLimiter({ channels: ch, inFlight: () => false, now: () => now })
  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r1', slots: 1 } }))
  l.bindWinner('r1', 'unseen')
  now = 9_000
  l.sweep()
  t.equal(l.reservedCount('a.test'), 1, 'its CHANNEL_CREATE may still come')
  now = 10_001
  l.sweep()
  t.equal(l.reservedCount('a.test'), 0, 'never seen: gone')

  t.ok(l.tryReserve('a.test', 10, { uuids: [], destination: { requestId: 'r2', slots: 1 } }))
  l.bindWinner('r2', 'seen')
  ch.legs.set('seen', true)
  l.channelChanged({ uuid: 'seen', requestId: 'r2', role: 'originator', state: 'answered' })
  l.sweep()
  t.equal(l.reservedCount('a.test'), 1)
  ch.legs.delete('seen') // destroyed, its hangup missed: the model forgets it
  l.sweep()
  t.equal(l.reservedCount('a.test'), 0, 'seen live, then forgotten: gone')
})

t.test('a hold taken after the answer (a request from before a restart) fits or is refused', async (t) => {
  const ch = fakeChannels()
  ch.live.set('a.test', 2)
  ch.legs.set('w', true)
  const l = new ChannelLimiter({ channels: ch, inFlight: () => false })
  t.equal(l.tryHoldAfterAnswer('a.test', 2, 'old', 'w', 1), false, 'at the limit: refused')
  t.equal(l.destinationSlots('old'), undefined)
  t.equal(l.tryHoldAfterAnswer('a.test', 3, 'old', 'w', 1), true)
  t.equal(l.destinationSlots('old'), 1)
  t.equal(l.inUse('a.test'), 3)
  l.sweep()
  t.equal(l.inUse('a.test'), 3, 'its answered leg lives: kept')
})

t.test("an IVR Transfer widens the request's hold only when the extra legs fit (tryWiden)", async (t) => {
  const ch = fakeChannels()
  const l = new ChannelLimiter({ channels: ch, inFlight: () => true })
  // call_external to an inline IVR: the PSTN leg + one destination slot (an IVR rings nothing yet).
  t.ok(l.tryReserve('a.test', 4, { uuids: ['o1'], destination: { requestId: 'r1', slots: 1 } }))
  l.release('o1')
  ch.live.set('a.test', 1)
  ch.legs.set('o1', true)
  l.bindWinner('r1', 'o1')
  t.equal(l.inUse('a.test'), 2)
  t.equal(l.tryWiden('a.test', 4, 'r1', 1), true, 'a Transfer of one leg is covered by the hold')
  t.equal(l.tryWiden('a.test', 4, 'r1', 4), false, 'three more legs do not fit under 4 beside the caller')
  t.equal(l.destinationSlots('r1'), 1, 'a refused widening leaves the hold as it was')
  t.equal(l.inUse('a.test'), 2)
  t.equal(l.tryWiden('a.test', 4, 'r1', 3), true, 'two more fit')
  t.equal(l.destinationSlots('r1'), 3)
  t.equal(l.inUse('a.test'), 4)
  t.equal(l.tryReserve('a.test', 4, { uuids: ['o2'] }), false, 'the widened hold counts for the next request')
  // Its legs come: they take their slots over, the count stays.
  ch.live.set('a.test', 3)
  l.channelChanged(destLeg('d1', 'r1', true))
  l.channelChanged(destLeg('d2', 'r1', true))
  t.equal(l.inUse('a.test'), 4)
  t.equal(l.tryWiden('a.test', 4, 'r1', 2), true, 'a smaller Transfer later is covered')
  t.equal(l.tryWiden('a.test', 4, 'nope', 1), false, 'a request without a hold widens nothing')
  // The caller hangs up: the whole hold ends.
  ch.legs.set('o1', false)
  l.channelChanged({ uuid: 'o1', requestId: 'r1', role: 'originator', state: 'hangup' })
  t.equal(l.destinationSlots('r1'), undefined)
})
