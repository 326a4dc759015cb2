/**
 * The finished calls of the live calls page (src/channels/call-history.ts): a call is finished
 * when the channel model destroyed its last leg, legs of one request or linked by the model are
 * one call, the outcome and the cause say how it went, and each domain keeps its last 50 only.
 */
import t from 'tap'
import { createCallHistory } from '../../src/channels/call-history.js'
import type { ChangeKind, ChannelChange, ChannelRecord } from '../../src/channels/index.js'
import { Ring } from '../../src/util/ring.js'

/** The model as the history reads it: the changes it publishes. */
function fakeModel() {
  const listeners: Array<(c: ChannelChange) => void> = []
  return {
    onChange(l: (c: ChannelChange) => void) {
      listeners.push(l)
      return () => listeners.splice(listeners.indexOf(l), 1)
    },
    emit(kind: ChangeKind, channel: Partial<ChannelRecord>) {
      const record = { peers: [], state: 'calling', offerAt: 0, stateAt: 0, domain: 'example.test', ...channel } as unknown as ChannelRecord
      for (const l of [...listeners]) l({ kind, channel: record })
    },
    get listeners() {
      return listeners.length
    },
  }
}

const T0 = 1_795_000_000_000

t.test('a bridged call of one request: one entry when its last leg is destroyed', async (t) => {
  const model = fakeModel()
  const history = createCallHistory({ channels: model })
  const a = { uuid: 'a', direction: 'outbound' as const, calledNumber: 'alice', requestId: 'r1', operation: 'call_user', offerAt: T0 }
  const b = { uuid: 'b', direction: 'outbound' as const, calledNumber: '0311112222', requestId: 'r1', otherUuid: 'a', offerAt: T0 + 2000 }
  model.emit('created', a)
  model.emit('answered', { ...a, state: 'answered', answerAt: T0 + 1000 })
  model.emit('created', b)
  model.emit('bridged', { ...b, state: 'bridged', answerAt: T0 + 5000, peers: ['a'] })
  model.emit('hangup', { ...b, state: 'hangup', answerAt: T0 + 5000, hangupAt: T0 + 65_400, hangupCause: 'NORMAL_CLEARING' })
  model.emit('destroyed', { ...b, state: 'hangup', answerAt: T0 + 5000, hangupAt: T0 + 65_400, hangupCause: 'NORMAL_CLEARING' })
  t.same(history.finished('example.test'), [], 'not finished while a leg is left')
  t.equal(history.openCalls, 1)
  model.emit('hangup', { ...a, state: 'hangup', answerAt: T0 + 1000, hangupAt: T0 + 65_500, hangupCause: 'NORMAL_CLEARING' })
  model.emit('destroyed', { ...a, state: 'hangup', answerAt: T0 + 1000, hangupAt: T0 + 65_500, hangupCause: 'NORMAL_CLEARING' })
  t.same(history.finished('EXAMPLE.test'), [
    {
      id: 'a',
      domain: 'example.test',
      requestId: 'r1',
      operation: 'call_user',
      parties: ['alice', '0311112222'],
      outcome: 'connected',
      startedAt: T0,
      answeredAt: T0 + 1000,
      endedAt: T0 + 65_500,
      durationS: 65,
      talkS: 64,
      hangupCause: 'NORMAL_CLEARING',
      legs: 2,
    },
  ])
  t.equal(history.openCalls, 0, 'nothing of it is held any more')
  t.same(history.finished('other.test'), [], "another domain's list is its own")
})

t.test('outcomes of calls nobody took, and a lost race does not decide the cause', async (t) => {
  const model = fakeModel()
  const history = createCallHistory({ channels: model })
  const end = (uuid: string, cause: string, extra: Partial<ChannelRecord> = {}) => {
    const leg = { uuid, direction: 'outbound' as const, calledNumber: uuid, offerAt: T0, hangupAt: T0 + 30_000, hangupCause: cause, state: 'hangup' as const, ...extra }
    model.emit('created', leg)
    model.emit('destroyed', leg)
  }
  end('busy', 'USER_BUSY')
  end('noanswer', 'NO_ANSWER')
  end('cancel', 'ORIGINATOR_CANCEL')
  end('fail', 'UNALLOCATED_NUMBER')
  end('alone', 'NORMAL_CLEARING', { answerAt: T0 + 3000 })
  t.same(
    history.finished('example.test').map((c) => [c.id, c.outcome, c.hangupCause, c.talkS]),
    [
      ['alone', 'answered', 'NORMAL_CLEARING', 27],
      ['fail', 'failed', 'UNALLOCATED_NUMBER', 0],
      ['cancel', 'cancelled', 'ORIGINATOR_CANCEL', 0],
      ['noanswer', 'no_answer', 'NO_ANSWER', 0],
      ['busy', 'busy', 'USER_BUSY', 0],
    ],
    'newest first',
  )

  // Ring-all: two terminals of one request; the loser's LOSE_RACE came first, the winner's cause decides.
  const legA = { uuid: 'ra1', requestId: 'r2', direction: 'outbound' as const, calledNumber: 'alice', offerAt: T0 }
  const legB = { uuid: 'ra2', requestId: 'r2', direction: 'outbound' as const, calledNumber: 'alice', offerAt: T0 }
  model.emit('created', legA)
  model.emit('created', legB)
  model.emit('destroyed', { ...legB, state: 'hangup', hangupAt: T0 + 1000, hangupCause: 'LOSE_RACE' })
  model.emit('destroyed', { ...legA, state: 'hangup', answerAt: T0 + 900, hangupAt: T0 + 9000, hangupCause: 'NORMAL_CLEARING' })
  t.match(history.finished('example.test')[0], { id: 'ra1', legs: 2, outcome: 'answered', hangupCause: 'NORMAL_CLEARING', parties: ['alice'] })
})

t.test('two calls linked by a bridge become one; an inbound leg names its caller', async (t) => {
  const model = fakeModel()
  const history = createCallHistory({ channels: model })
  const inbound = { uuid: 'in', direction: 'inbound' as const, callingNumber: '0399998888', calledNumber: '100', offerAt: T0 }
  const agent = { uuid: 'ag', direction: 'outbound' as const, calledNumber: 'bob', requestId: 'r3', offerAt: T0 + 100 }
  model.emit('created', inbound)
  model.emit('created', agent)
  t.equal(history.openCalls, 2, 'two calls while nothing links them')
  model.emit('bridged', { ...agent, state: 'bridged', peers: ['in'], answerAt: T0 + 2000 })
  t.equal(history.openCalls, 1, 'one call once bridged')
  model.emit('destroyed', { ...inbound, state: 'hangup', hangupAt: T0 + 10_000, hangupCause: 'NORMAL_CLEARING' })
  model.emit('destroyed', { ...agent, state: 'hangup', answerAt: T0 + 2000, hangupAt: T0 + 10_000, hangupCause: 'NORMAL_CLEARING' })
  t.match(history.finished('example.test'), [{ id: 'in', parties: ['0399998888', 'bob'], outcome: 'connected', requestId: 'r3', legs: 2 }])
})

t.test('each domain keeps its last 50 only; channels of no domain are not kept; close stops', async (t) => {
  const model = fakeModel()
  const history = createCallHistory({ channels: model })
  for (let i = 0; i < 60; i++) {
    const leg = { uuid: `leg-${i}`, direction: 'outbound' as const, calledNumber: String(i), offerAt: T0 + i, hangupAt: T0 + i + 1, state: 'hangup' as const, hangupCause: 'NO_ANSWER' }
    model.emit('created', leg)
    model.emit('destroyed', leg)
  }
  const kept = history.finished('example.test')
  t.equal(kept.length, 50)
  t.equal(kept[0]?.id, 'leg-59', 'the newest first')
  t.equal(kept[49]?.id, 'leg-10', 'the oldest kept: the first ten were dropped')
  model.emit('created', { uuid: 'nodomain', domain: undefined })
  model.emit('destroyed', { uuid: 'nodomain', domain: undefined })
  t.equal(history.openCalls, 0)
  history.close()
  t.equal(model.listeners, 0, 'unsubscribed')
})

t.test('the ring', async (t) => {
  const ring = new Ring<number>(3)
  t.same(ring.toArray(), [])
  for (const n of [1, 2, 3, 4, 5]) ring.push(n)
  t.same(ring.toArray(), [3, 4, 5], 'the newest three, oldest first')
  t.equal(ring.size, 3)
  t.throws(() => new Ring(0), RangeError)
})
