import t from 'tap'
import { NOOP_COMMAND, Outgoing } from '../../src/pbx/outgoing.js'

const reply = (text: string) => ({ headers: { replyText: text } })
const NOOP = `${NOOP_COMMAND}\n\n`

t.test('an api command: answered by its output, the body of the reply esl-lite hands on (esl-framing.ts)', async (t) => {
  const o = new Outgoing('api hash select/cod_x/k', () => 1, () => true)
  t.equal(o.buf.toString(), 'api hash select/cod_x/k\n\n')
  o.resolve({ headers: {}, body: Buffer.from('v1') })
  const r = await o.outcome
  t.same(r.kind === 'answered' ? [r.replyText, r.body.toString()] : r, ['', 'v1'])
})

t.test('written once, answered by its reply', async (t) => {
  let written = 0
  const o = new Outgoing('bgapi originate x', () => 1, () => true, () => written++)
  t.equal(o.buf.toString(), 'bgapi originate x\n\n')
  t.equal(written, 1)
  t.equal(o.replyPending, true)
  o.resolve(reply('+OK Job-UUID: j'))
  t.same(await o.outcome, { kind: 'answered', replyText: '+OK Job-UUID: j', body: Buffer.alloc(0) })
  t.equal(o.replyPending, false)
})

t.test('withdrawn before it was written: never written, a no-op goes instead', async (t) => {
  const o = new Outgoing('bgapi originate x', () => 1, () => true)
  t.equal(o.withdraw('timeout'), true)
  t.same(await o.outcome, { kind: 'withdrawn', why: 'timeout' })
  t.equal(o.buf.toString(), NOOP, 'esl-lite writes the no-op when its turn comes')
  o.resolve(reply('+OK event listener enabled json'))
  t.equal(o.withdraw('timeout'), false)
})

t.test('not writable when its turn comes (the link went down): withdrawn as disconnected', async (t) => {
  const o = new Outgoing('bgapi originate x', () => 1, () => false)
  t.equal(o.buf.toString(), NOOP)
  t.same(await o.outcome, { kind: 'withdrawn', why: 'disconnected' })
})

t.test('written, then its socket closed: unconfirmed; the re-send after a reconnect is a no-op', async (t) => {
  const o = new Outgoing('bgapi originate x', () => 1, () => true)
  t.equal(o.buf.toString(), 'bgapi originate x\n\n')
  t.equal(o.withdraw('disconnected'), false, 'a written command cannot be withdrawn')
  o.socketGone()
  t.same(await o.outcome, { kind: 'unconfirmed' })
  t.equal(o.buf.toString(), NOOP, 'esl-lite re-queued it on the new socket: never written twice')
  o.resolve(reply('+OK event listener enabled json'))
  t.equal(o.replyPending, false)
})

t.test('reply overdue: unconfirmed; the late reply is consumed and ignored', async (t) => {
  const o = new Outgoing('bgapi originate x', () => 1, () => true)
  void o.buf
  o.lose()
  t.same(await o.outcome, { kind: 'unconfirmed' })
  t.equal(o.replyPending, true, 'its reply is still due on the socket')
  o.resolve(reply('+OK Job-UUID: j'))
  t.equal(o.replyPending, false)
})
