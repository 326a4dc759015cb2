/**
 * The channel record's storage (src/channels/record.ts): `state`, `answered`, `direction` and
 * `gateway` share one small integer, the fields a live call seldom has live in a side object,
 * and times are offsets. Each field must read back what was written, whatever the others hold,
 * so that a packing mistake fails here rather than as a wrong state on a CTI panel.
 */
import t from 'tap'
import { newChannel, withItem, withoutItem, type MutableChannel } from '../../src/channels/record.js'
import type { CallDirection, ChannelState } from '../../src/channels/types.js'
import type { EndUser } from '../../src/pbx/end-user.js'

const STATES: readonly ChannelState[] = ['calling', 'ringing', 'answered', 'bridged', 'park', 'ivr', 'hangup']
const DIRECTIONS: readonly (CallDirection | undefined)[] = [undefined, 'inbound', 'outbound']
const AT = Date.UTC(2026, 10, 24, 12, 0, 0, 123)
const U = 'c3ae631c-9f36-443b-ba73-d09384c58667'

const fresh = (): MutableChannel => newChannel(U, AT, AT - 5000, 7)
/** Whether the record made its side object (the memory it costs: docs/bench.md). */
const hasSideObject = (ch: MutableChannel): boolean => Reflect.get(ch, 'seldom') !== undefined

t.test('a new record: what the constructor was given, every other field empty', async (t) => {
  const ch = fresh()
  t.match(ch, {
    uuid: U,
    seenSeq: 7,
    state: 'calling',
    stateAt: AT,
    answered: false,
    offerAt: AT - 5000,
    direction: undefined,
    gateway: false,
  })
  for (const field of ['domain', 'answerAt', 'hangupAt', 'hangupCause', 'otherUuid', 'callingName', 'callingNumber', 'calledNumber'] as const) {
    t.equal(ch[field], undefined, field)
  }
  for (const field of ['requestId', 'operation', 'role', 'userId', 'endUser', 'peerEndUser'] as const) t.equal(ch[field], undefined, field)
  t.same(ch.parties, [])
  t.same(ch.peers, [])
  t.same(ch.vars, {})
  t.notOk(hasSideObject(ch), 'no side object until a seldom field is set')
  t.throws(() => {
    ch.offerAt = AT
  }, /set once/)
})

t.test('state, answered, direction and gateway: every combination reads back, in any order of writing', async (t) => {
  const ch = fresh()
  let checked = 0
  for (const state of STATES)
    for (const answered of [false, true])
      for (const direction of DIRECTIONS)
        for (const gateway of [false, true]) {
          // Written in two orders, over whatever the previous combination left.
          ch.state = state
          ch.answered = answered
          ch.direction = direction
          ch.gateway = gateway
          t.same([ch.state, ch.answered, ch.direction, ch.gateway], [state, answered, direction, gateway])
          ch.gateway = gateway
          ch.direction = direction
          ch.answered = answered
          ch.state = state
          t.same([ch.state, ch.answered, ch.direction, ch.gateway], [state, answered, direction, gateway])
          checked++
        }
  t.equal(checked, 7 * 2 * 3 * 2)
  t.equal(ch.stateAt, AT, 'the state time is its own field')
  t.equal(ch.seenSeq, 7)
})

t.test('a value outside the types is refused, not stored as another', async (t) => {
  const ch = fresh()
  ch.state = 'park'
  ch.direction = 'inbound'
  t.throws(() => {
    ch.state = 'talking' as ChannelState
  }, /not a channel state: talking/)
  t.throws(() => {
    ch.direction = 'sideways' as CallDirection
  }, /not a call direction: sideways/)
  t.same([ch.state, ch.direction], ['park', 'inbound'], 'unchanged by the refused writes')
})

t.test('times: epoch milliseconds in, the same out, undefined kept', async (t) => {
  const ch = fresh()
  for (const ms of [AT, AT + 1, AT - 86_400_000, AT + 30 * 86_400_000, 0]) {
    ch.stateAt = ms
    ch.answerAt = ms
    ch.hangupAt = ms
    t.same([ch.stateAt, ch.answerAt, ch.hangupAt], [ms, ms, ms], `at ${ms}`)
  }
  ch.answerAt = undefined
  ch.hangupAt = undefined
  t.same([ch.answerAt, ch.hangupAt], [undefined, undefined])
})

t.test('seldom fields: each one reads back on its own, and writing one leaves the others alone', async (t) => {
  const alice: EndUser = { id: 'e1', name: 'Alice' }
  const bob: EndUser = { id: 'e2', name: 'Bob' }
  const values = {
    hangupAt: AT + 60_000,
    hangupCause: 'NORMAL_CLEARING',
    otherUuid: '11111111-0000-4000-8000-000000000000',
    endUser: alice,
    peerEndUser: bob,
    peers: ['22222222-0000-4000-8000-000000000000'],
  } as const
  type Seldom = keyof typeof values
  const read = (ch: MutableChannel) => ({
    hangupAt: ch.hangupAt,
    hangupCause: ch.hangupCause,
    otherUuid: ch.otherUuid,
    endUser: ch.endUser,
    peerEndUser: ch.peerEndUser,
    peers: ch.peers,
  })
  const empty = read(fresh())
  for (const field of Object.keys(values) as Seldom[]) {
    const ch = fresh()
    Object.assign(ch, { [field]: values[field] })
    t.same(read(ch), { ...empty, [field]: values[field] }, `${field} alone`)
    t.ok(hasSideObject(ch), `${field} makes the side object`)
    t.match(ch, { state: 'calling', answered: false, stateAt: AT }, `${field} leaves the packed fields alone`)
  }
  const ch = fresh()
  Object.assign(ch, values)
  t.same(read(ch), values, 'all of them together')
  t.equal(ch.endUser, alice, 'the end_user object itself, not a copy')
  ch.otherUuid = undefined
  t.same(read(ch), { ...values, otherUuid: undefined }, 'one cleared, the others kept')
  ch.peers = withoutItem(ch.peers, values.peers[0])
  t.same(ch.peers, [])
  ch.peers = withItem(ch.peers, 'x')
  t.same(ch.peers, ['x'])
})

t.test('writing a seldom field its empty value makes no side object', async (t) => {
  const ch = fresh()
  ch.hangupAt = undefined
  ch.hangupCause = undefined
  ch.otherUuid = undefined
  ch.endUser = undefined
  ch.peerEndUser = undefined
  ch.peers = withoutItem(ch.peers, 'absent')
  t.notOk(hasSideObject(ch))
  t.same([ch.hangupAt, ch.hangupCause, ch.otherUuid, ch.endUser, ch.peerEndUser, ch.peers], [undefined, undefined, undefined, undefined, undefined, []])
})
