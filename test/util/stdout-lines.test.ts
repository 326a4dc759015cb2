/**
 * The daemon's stdout destination (src/util/stdout-lines.ts) with a stand-in for the write
 * syscall: a full pipe (EAGAIN) keeps lines waiting, bounded, and never loops; a stdout that is
 * gone (EPIPE) takes nothing more; partial writes go on where they stopped.
 */
import t from 'tap'
import { MAX_WAITING_BYTES, StdoutLines, type WriteSync } from '../../src/util/stdout-lines.js'

const errno = (code: string): Error => Object.assign(new Error(code), { code })

/** A stand-in stdout: takes up to `room` bytes per call, or throws what `fail` says. */
function fakeStdout() {
  const state = { written: '', calls: 0, fail: undefined as string | undefined, room: Infinity }
  const write: WriteSync = (_fd, buf) => {
    state.calls++
    if (state.fail !== undefined) throw errno(state.fail)
    const n = Math.min(buf.length, state.room)
    state.written += buf.subarray(0, n).toString('utf8')
    return n
  }
  return { state, write }
}

t.test('flushMs 0: each line is written at once', async (t) => {
  const out = fakeStdout()
  const d = new StdoutLines({ fd: 1, flushMs: 0, write: out.write })
  t.teardown(() => d.close())
  d.write('a\n')
  d.write('b\n')
  t.equal(out.state.written, 'a\nb\n')
})

t.test('a partial write goes on where it stopped', async (t) => {
  const out = fakeStdout()
  out.state.room = 3
  const d = new StdoutLines({ fd: 1, flushMs: 0, write: out.write })
  t.teardown(() => d.close())
  d.write('0123456789\n')
  t.equal(out.state.written, '0123456789\n')
})

t.test('a full pipe (EAGAIN): one attempt per flush, the lines wait, then go out in order', async (t) => {
  const out = fakeStdout()
  out.state.fail = 'EAGAIN'
  const d = new StdoutLines({ fd: 1, flushMs: 0, write: out.write })
  t.teardown(() => d.close())
  d.write('first\n')
  d.write('second\n')
  t.equal(out.state.calls, 1, 'one attempt, no retry loop; the second line waits for the planned retry')
  t.equal(d.waitingLength, 'first\nsecond\n'.length)
  out.state.fail = undefined
  d.flush()
  t.equal(out.state.written, 'first\nsecond\n')
  t.equal(d.waitingLength, 0)
})

t.test('a full pipe: at most MAX_WAITING_BYTES wait; the dropped lines are counted in a line of their own', async (t) => {
  const out = fakeStdout()
  out.state.fail = 'EAGAIN'
  const d = new StdoutLines({ fd: 1, flushMs: 0, write: out.write })
  t.teardown(() => d.close())
  const line = `${'x'.repeat(1023)}\n`
  for (let i = 0; i < 2000; i++) d.write(line)
  t.ok(d.waitingLength <= MAX_WAITING_BYTES, `${d.waitingLength} bytes waiting`)
  out.state.fail = undefined
  d.flush()
  const lines = out.state.written.trimEnd().split('\n')
  t.equal(lines.length, MAX_WAITING_BYTES / 1024 + 1)
  t.match(JSON.parse(lines.at(-1) ?? '{}'), { level: 40, dropped: 2000 - MAX_WAITING_BYTES / 1024 })
})

t.test('a stdout that is gone (EPIPE): nothing is written again, nothing waits', async (t) => {
  const out = fakeStdout()
  out.state.fail = 'EPIPE'
  const d = new StdoutLines({ fd: 1, flushMs: 0, write: out.write })
  t.teardown(() => d.close())
  d.write('lost\n')
  d.write('lost too\n')
  d.flush()
  t.equal(out.state.calls, 1, 'no write after the EPIPE')
  t.equal(d.waitingLength, 0)
})

t.test('flushMs > 0: lines wait for a batch, or for the flush', async (t) => {
  const out = fakeStdout()
  const d = new StdoutLines({ fd: 1, flushMs: 60_000, write: out.write })
  t.teardown(() => d.close())
  d.write('waits\n')
  t.equal(out.state.written, '')
  d.write(`${'y'.repeat(5000)}\n`)
  t.equal(out.state.written.length, 'waits\n'.length + 5001, 'a batch over 4 KiB goes at once')
})
