import t from 'tap'
import { memberTimeout, runHunt, type HuntLeg, type HuntMember, type HuntOps } from '../../src/origination/hunt.js'
import type { AttemptOutcome } from '../../src/origination/outcome.js'

const member = (name: string, terminals: number): HuntMember => ({
  userId: name,
  userName: name,
  contacts: Array.from({ length: terminals }, (_, i) => `sofia/internal/sip:${name}@127.0.0.1:${5000 + i}`),
  uuids: Array.from({ length: terminals }, (_, i) => `${name}-${i}`),
})

interface Script {
  /** Outcome per member name; seconds the member takes (FreeSWITCH time). */
  readonly outcomes: Record<string, { outcome: 'answer' | string; takes: number }>
  readonly fresh?: Record<string, readonly string[] | undefined>
  readonly reserveFails?: readonly string[]
  readonly refuseFirst?: boolean
}

function fakeOps(script: Script) {
  let clock = 0
  const started: Array<{ member: string; legs: readonly HuntLeg[]; timeoutSec: number }> = []
  const reserved: string[][] = []
  const released: string[][] = []
  const ops: HuntOps = {
    lookup: async (m) => (script.fresh !== undefined && m.userName in script.fresh ? script.fresh[m.userName] : m.contacts),
    reserve: (uuids) => {
      if (uuids.some((u) => script.reserveFails?.some((p) => u.startsWith(p)))) return false
      reserved.push([...uuids])
      return true
    },
    release: (uuids) => {
      if (uuids.length > 0) released.push([...uuids])
    },
    start: async (m, legs, timeoutSec) => {
      if (script.refuseFirst === true && started.length === 0) return { ok: false, error: { reason: 'pbx_unavailable', description: 'down' } }
      started.push({ member: m.userName, legs, timeoutSec })
      const s = script.outcomes[m.userName] ?? { outcome: 'NO_ANSWER', takes: timeoutSec }
      clock += Math.min(s.takes, timeoutSec)
      const outcome: AttemptOutcome =
        s.outcome === 'answer' && s.takes <= timeoutSec
          ? { answered: true, uuid: legs[0]?.uuid ?? '' }
          : { answered: false, cause: s.outcome === 'answer' ? 'NO_ANSWER' : s.outcome }
      return { ok: true, value: Promise.resolve(outcome) }
    },
    elapsedSec: () => clock,
    stopped: () => false,
  }
  return { ops, started, reserved, released }
}

const times = { answerTimeoutSec: 60, memberAnswerTimeoutSec: 15 }

t.test('memberTimeout: the member timeout, cut to what is left of the hunt', async (t) => {
  t.equal(memberTimeout(times, 0), 15)
  t.equal(memberTimeout(times, 50), 10)
  t.equal(memberTimeout(times, 59.4), 1)
  t.equal(memberTimeout(times, 59.6), undefined)
  t.equal(memberTimeout({ answerTimeoutSec: 1, memberAnswerTimeoutSec: 15 }, 0.01), 1, 'a one-second hunt still rings')
})

t.test('first member answers: later members never rung', async (t) => {
  const { ops, started } = fakeOps({ outcomes: { a: { outcome: 'answer', takes: 3 } } })
  const accepted: unknown[] = []
  const r = await runHunt([member('a', 2), member('b', 1)], times, ops, (x) => accepted.push(x))
  t.same(r, { reported: true, outcome: { answered: true, uuid: 'a-0' } })
  t.same(started.map((s) => s.member), ['a'])
  t.same(started[0]?.legs.map((l) => l.uuid), ['a-0', 'a-1'], 'all terminals of the member together')
  t.equal(accepted.length, 1)
})

t.test('no answer then the second member answers; member timeout honoured', async (t) => {
  const { ops, started } = fakeOps({ outcomes: { a: { outcome: 'NO_ANSWER', takes: 15 }, b: { outcome: 'answer', takes: 2 } } })
  const r = await runHunt([member('a', 1), member('b', 1)], times, ops, () => {})
  t.same(r.outcome, { answered: true, uuid: 'b-0' })
  t.same(
    started.map((s) => [s.member, s.timeoutSec]),
    [
      ['a', 15],
      ['b', 15],
    ],
  )
})

t.test('busy and reject: next member at once; the last cause is reported', async (t) => {
  const { ops, started } = fakeOps({ outcomes: { a: { outcome: 'USER_BUSY', takes: 0 }, b: { outcome: 'CALL_REJECTED', takes: 0 } } })
  const r = await runHunt([member('a', 1), member('b', 1)], times, ops, () => {})
  t.same(r.outcome, { answered: false, cause: 'CALL_REJECTED' })
  t.same(started.map((s) => s.timeoutSec), [15, 15], 'no time was used up')
})

t.test('a member unregistered since the start is skipped; a fresh terminal list is used', async (t) => {
  const { ops, started } = fakeOps({
    outcomes: { a: { outcome: 'USER_BUSY', takes: 0 }, c: { outcome: 'answer', takes: 1 } },
    fresh: { b: [], c: ['sofia/internal/sip:c@127.0.0.1:6000'] },
  })
  const r = await runHunt([member('a', 1), member('b', 1), member('c', 2)], times, ops, () => {})
  t.same(started.map((s) => s.member), ['a', 'c'])
  t.same(started[1]?.legs, [{ uuid: 'c-0', contact: 'sofia/internal/sip:c@127.0.0.1:6000' }], 'fewer terminals: the first uuids')
  t.same(r.outcome, { answered: true, uuid: 'c-0' })
})

t.test('overall answer_timeout cuts the hunt short', async (t) => {
  const { ops, started } = fakeOps({ outcomes: {} })
  const r = await runHunt([member('a', 1), member('b', 1), member('c', 1), member('d', 1)], { answerTimeoutSec: 20, memberAnswerTimeoutSec: 15 }, ops, () => {})
  t.same(
    started.map((s) => [s.member, s.timeoutSec]),
    [
      ['a', 15],
      ['b', 5],
    ],
  )
  t.same(r.outcome, { answered: false, cause: 'NO_ANSWER' })
})

t.test('reservations: one member at a time; a member that no longer fits is skipped', async (t) => {
  const { ops, started, reserved } = fakeOps({ outcomes: { c: { outcome: 'answer', takes: 1 } }, reserveFails: ['b-'] })
  const r = await runHunt([member('a', 1), member('b', 2), member('c', 1)], times, ops, () => {})
  t.same(reserved, [['c-0']], 'the first member was reserved by the caller; b did not fit; c reserved just before ringing')
  t.same(started.map((s) => s.member), ['a', 'c'])
  t.same(r.outcome, { answered: true, uuid: 'c-0' })
})

t.test('first originate refused: the API gets the error, nothing is reported', async (t) => {
  const { ops, started } = fakeOps({ outcomes: {}, refuseFirst: true })
  const accepted: Array<{ ok: boolean }> = []
  const r = await runHunt([member('a', 1), member('b', 1)], times, ops, (x) => accepted.push(x))
  t.equal(r.reported, false)
  t.same(accepted.map((a) => a.ok), [false])
  t.equal(started.length, 0)
})
