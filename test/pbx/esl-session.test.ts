/**
 * src/pbx/esl-session.ts: the daemon's Event Socket session, against the mini ESL server. What
 * the connection's tests (connection.test.ts) see through it is pinned there; here, the session's
 * own rules: `auth` first, nothing of ours before it is accepted, a refused password never counts,
 * and end() leaves no socket behind, even one still connecting.
 */
import t, { type Test } from 'tap'
import { EslSession, type EslSessionHooks } from '../../src/pbx/esl-session.js'
import { Outgoing } from '../../src/pbx/outgoing.js'
import { silentLogger } from '../../src/util/logger.js'
import { withFakeClock } from '../support/fake-clock.js'
import { flush, waitFor } from '../support/wait.js'
import { startMiniEsl, type MiniEsl } from './mini-esl.js'

function session(t: Test, esl: MiniEsl, password = 'ClueCon') {
  const seen: string[] = []
  const hooks: EslSessionHooks = {
    opened: (gen) => seen.push(`opened ${gen}`),
    authenticated: (gen) => seen.push(`authenticated ${gen}`),
    closed: (gen) => seen.push(`closed ${gen}`),
    event: () => true,
    disconnectNotice: () => seen.push('notice'),
  }
  const s = new EslSession({ host: '127.0.0.1', port: esl.port, password, keepAliveMs: 1000, logger: silentLogger() }, hooks)
  t.teardown(() => s.end())
  return { s, seen }
}

async function miniEsl(t: Test): Promise<MiniEsl> {
  const esl = await startMiniEsl()
  t.teardown(() => esl.close())
  return esl
}

t.test('auth first; a command sent before the socket authenticated is written after it', async (t) => {
  const esl = await miniEsl(t)
  const { s, seen } = session(t, esl)
  const early = new Outgoing('event json CHANNEL_CREATE')
  s.send(early)
  const r = await early.outcome
  t.same(r.kind === 'answered' ? r.replyText : r, '+OK event listener enabled json')
  t.same(esl.received, ['auth ClueCon', 'event json CHANNEL_CREATE'])
  t.same(seen, ['opened 1', 'authenticated 1'])
  t.equal(early.socketGeneration, 1)
})

t.test('one command at a time: the next is written once the previous one got its reply', async (t) => {
  const esl = await miniEsl(t)
  const { s } = session(t, esl)
  esl.stall = (c) => c === 'event json CHANNEL_CREATE'
  const first = new Outgoing('event json CHANNEL_CREATE')
  const second = new Outgoing('event json CHANNEL_ANSWER')
  s.send(first)
  s.send(second)
  await waitFor('the first written', () => esl.received.includes('event json CHANNEL_CREATE'))
  // No timer is involved: a second written with the first would have arrived with it or in the next turns.
  await flush(20)
  t.same(esl.received, ['auth ClueCon', 'event json CHANNEL_CREATE'], 'the second waits for the reply to the first')
  t.equal(s.awaitingReply, true)
})

t.test('a refused password: never authenticated, nothing of ours written, tried again after a pause', (t) =>
  withFakeClock(async (clock) => {
    const esl = await miniEsl(t)
    const { s, seen } = session(t, esl, 'WrongPass')
    const command = new Outgoing('event json CHANNEL_CREATE')
    s.send(command)
    const attempts = () => esl.received.filter((l) => l === 'auth WrongPass').length
    // Real I/O only (the fake time stands still) until the refused socket closed and the retry waits on its timer.
    const ioOnly = () => false
    await clock.runUntil('the retry scheduled', () => seen.includes('closed 1') && clock.pending() === 1, ioOnly)
    await clock.advance(199)
    await flush(20)
    t.equal(attempts(), 1, 'not tried again before the pause (200 ms) is over')
    await clock.advance(1)
    await clock.runUntil('the second attempt', () => attempts() === 2, ioOnly)
    await clock.runUntil('the second retry scheduled', () => seen.includes('closed 2') && clock.pending() === 1, ioOnly)
    await clock.advance(199)
    await flush(20)
    t.equal(attempts(), 2, 'the pause again: refused sockets are not retried at once')
    await clock.advance(1)
    await clock.runUntil('the third attempt', () => attempts() === 3, ioOnly)
    t.notOk(esl.received.includes('event json CHANNEL_CREATE'), 'the command was never written')
    t.notOk(seen.some((l) => l.startsWith('authenticated')))
    t.equal(command.isQueued, true, 'it waits (its owner withdraws it when the socket closes)')
    s.end()
  }),
)

t.test('end() while the first attempt is still connecting: that socket never authenticates', async (t) => {
  const esl = await miniEsl(t)
  const { s, seen } = session(t, esl)
  s.end()
  // No timer is involved: an attempt that went on would connect, be greeted and answer within a few turns.
  await flush(20)
  t.same(esl.received, [], 'no auth was ever written')
  t.same(seen, [])
  t.equal(s.socketOpen, false)
})

t.test('the socket closes: the command in flight is unconfirmed, never written again; a new socket follows at once', async (t) => {
  const esl = await miniEsl(t)
  const { s, seen } = session(t, esl)
  esl.stall = (c) => c.startsWith('originate')
  const placed = new Outgoing('bgapi originate sofia/internal/x &park()')
  s.send(placed)
  await waitFor('the originate written', () => esl.received.includes('bgapi originate sofia/internal/x &park()'))
  esl.dropAll()
  t.same(await placed.outcome, { kind: 'unconfirmed' })
  await waitFor('the second socket authenticated', () => seen.includes('authenticated 2'))
  t.same(seen, ['opened 1', 'authenticated 1', 'closed 1', 'opened 2', 'authenticated 2'])
  // Written in turn: once a later command is answered, anything queued before it was written.
  const later = new Outgoing('event json CHANNEL_ANSWER')
  s.send(later)
  t.equal((await later.outcome).kind, 'answered')
  t.equal(esl.received.filter((l) => l.startsWith('bgapi originate')).length, 1, 'written once')
})
