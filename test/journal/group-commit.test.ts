/**
 * The journal's group commit (src/journal/group-commit.ts): appends of one turn share a durable
 * write; an unhurried append (a request's `ended`) starts no write of its own before its delay,
 * rides with the next batch when one comes, and a flush writes it at once.
 */
import t from 'tap'
import { GroupCommitter, type CommitTarget } from '../../src/journal/group-commit.js'
import { withFakeClock } from '../support/fake-clock.js'

/** A target whose writes the test lets finish, one by one (or at once with `auto`). */
function target(o: { auto?: boolean; fail?: boolean } = {}) {
  const commits: string[] = []
  const failures: number[] = []
  const waiting: Array<() => void> = []
  const t: CommitTarget = {
    commit: (text) => {
      commits.push(text)
      if (o.fail === true) return Promise.reject(new Error('disk full'))
      if (o.auto !== false) return Promise.resolve()
      return new Promise<void>((resolve) => waiting.push(resolve))
    },
    between: () => Promise.resolve(),
    failed: (_e, records) => void failures.push(records),
  }
  return { t, commits, failures, finishOne: () => waiting.shift()?.() }
}

const turn = () => new Promise((r) => setImmediate(r))
/** Tracks whether a promise has settled. */
const watch = (p: Promise<void>) => {
  const s = { done: false }
  void p.then(() => (s.done = true))
  return s
}

t.test('appends of one turn share one write; an append during a write goes in the next', async (t) => {
  const tg = target({ auto: false })
  const c = new GroupCommitter(tg.t)
  const a = watch(c.append('a\n'))
  const b = watch(c.append('b\n'))
  await turn()
  t.same(tg.commits, ['a\nb\n'])
  const late = watch(c.append('c\n'))
  await turn()
  t.same(tg.commits, ['a\nb\n'], 'one write at a time')
  t.notOk(a.done || b.done, 'not durable before the write returns')
  tg.finishOne()
  await turn()
  await turn()
  t.ok(a.done && b.done)
  t.same(tg.commits, ['a\nb\n', 'c\n'])
  tg.finishOne()
  await c.flushed()
  t.ok(late.done)
  t.equal(c.commits, 2)
})

t.test('an unhurried append alone waits for its delay, then goes out on its own', (t) =>
  withFakeClock(async (clock) => {
    const tg = target()
    const c = new GroupCommitter(tg.t, { unhurriedMs: 40 })
    const e = watch(c.append('ended\n', { unhurried: true }))
    await clock.advance(39)
    await turn()
    t.same(tg.commits, [], 'no write before the delay, to its last millisecond')
    t.notOk(e.done)
    await clock.advance(1)
    await turn()
    await turn()
    t.same(tg.commits, ['ended\n'])
    t.ok(e.done, 'resolved once durable')
  }),
)

t.test('an unhurried append rides with the next hurried one: one write for both', (t) =>
  withFakeClock(async (clock) => {
    const tg = target()
    const c = new GroupCommitter(tg.t, { unhurriedMs: 1000 })
    const e = watch(c.append('ended\n', { unhurried: true }))
    await clock.advance(5)
    await c.append('accepted\n')
    t.same(tg.commits, ['ended\naccepted\n'])
    t.ok(e.done)
    t.equal(clock.pending(), 0, 'its timer gone with it')
    await clock.advance(60_000)
    await turn()
    t.same(tg.commits, ['ended\naccepted\n'], 'and nothing written in the next minute')
  }),
)

t.test('unhurried appends made during a write start no write of their own', (t) =>
  withFakeClock(async (clock) => {
    const tg = target({ auto: false })
    const c = new GroupCommitter(tg.t, { unhurriedMs: 40 })
    void c.append('intended\n')
    await turn()
    const e1 = watch(c.append('ended 1\n', { unhurried: true }))
    const e2 = watch(c.append('ended 2\n', { unhurried: true }))
    tg.finishOne()
    await clock.advance(39)
    await turn()
    t.same(tg.commits, ['intended\n'], 'the write that ended left them waiting')
    // A hurried append takes them along.
    const h = watch(c.append('accepted\n'))
    await turn()
    t.same(tg.commits, ['intended\n', 'ended 1\nended 2\naccepted\n'])
    tg.finishOne()
    await c.flushed()
    t.ok(e1.done && e2.done && h.done)
    // And alone, their delay sends them.
    const e3 = watch(c.append('ended 3\n', { unhurried: true }))
    await clock.advance(39)
    await turn()
    t.equal(tg.commits.length, 2)
    await clock.advance(1)
    await turn()
    t.same(tg.commits.at(-1), 'ended 3\n')
    tg.finishOne()
    await c.flushed()
    t.ok(e3.done)
  }),
)

t.test('a flush writes the unhurried appends at once (the journal closing)', async (t) => {
  const tg = target()
  const c = new GroupCommitter(tg.t, { unhurriedMs: 60_000 })
  const e = watch(c.append('ended\n', { unhurried: true }))
  await c.flushed()
  t.same(tg.commits, ['ended\n'])
  t.ok(e.done)
  await c.flushed()
  t.equal(c.commits, 1, 'nothing left to write')
})

t.test('a failed write: its callers resolve all the same, and the target hears how many records', async (t) => {
  const tg = target({ fail: true })
  const c = new GroupCommitter(tg.t, { unhurriedMs: 10 })
  await Promise.all([c.append('a\n'), c.append('b\n', { unhurried: true })])
  t.same(tg.failures, [2])
  t.equal(c.commits, 0)
})
