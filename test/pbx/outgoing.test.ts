import t from 'tap'
import { Outgoing } from '../../src/pbx/outgoing.js'

const NO_BODY = Buffer.alloc(0)

t.test('an api command: answered by its output, the body of its api/response', async (t) => {
  const o = new Outgoing('api hash select/cod_x/k')
  t.equal(o.take(1)?.toString(), 'api hash select/cod_x/k\n\n')
  o.answer('', Buffer.from('v1'))
  const r = await o.outcome
  t.same(r.kind === 'answered' ? [r.replyText, r.body.toString()] : r, ['', 'v1'])
})

t.test('written once, on the socket it was taken on, answered by its reply', async (t) => {
  const o = new Outgoing('bgapi originate x')
  t.equal(o.take(3)?.toString(), 'bgapi originate x\n\n')
  t.equal(o.socketGeneration, 3)
  t.equal(o.replyPending, true)
  t.equal(o.take(4), undefined, 'never written a second time')
  o.answer('+OK Job-UUID: j', NO_BODY)
  t.same(await o.outcome, { kind: 'answered', replyText: '+OK Job-UUID: j', body: NO_BODY })
  t.equal(o.replyPending, false)
})

t.test('a body: text/plain with its length, after the headers (sendmsg execute)', async (t) => {
  const o = new Outgoing('sendmsg u\ncall-command: execute', () => true, Buffer.from('caf\u00e9'))
  t.equal(o.take(1)?.toString(), 'sendmsg u\ncall-command: execute\nContent-Type: text/plain\nContent-Length: 5\n\ncaf\u00e9')
})

t.test('withdrawn before it was written: never written', async (t) => {
  const o = new Outgoing('bgapi originate x')
  t.equal(o.withdraw('timeout'), true)
  t.same(await o.outcome, { kind: 'withdrawn', why: 'timeout' })
  t.equal(o.take(1), undefined, 'skipped when its turn comes')
  t.equal(o.withdraw('timeout'), false)
})

t.test('not writable when its turn comes (the link went down): withdrawn as disconnected', async (t) => {
  const o = new Outgoing('bgapi originate x', () => false)
  t.equal(o.take(1), undefined)
  t.same(await o.outcome, { kind: 'withdrawn', why: 'disconnected' })
})

t.test('written, then its socket closed: unconfirmed, and never written again', async (t) => {
  const o = new Outgoing('bgapi originate x')
  t.ok(o.take(1))
  t.equal(o.withdraw('disconnected'), false, 'a written command cannot be withdrawn')
  o.socketGone()
  t.same(await o.outcome, { kind: 'unconfirmed' })
  t.equal(o.replyPending, false)
  t.equal(o.take(2), undefined, 'not on the next socket either')
})

t.test('reply overdue: unconfirmed; the late reply is consumed and ignored', async (t) => {
  const o = new Outgoing('bgapi originate x')
  o.take(1)
  o.lose()
  t.same(await o.outcome, { kind: 'unconfirmed' })
  t.equal(o.replyPending, true, 'its reply is still due on the socket')
  o.answer('+OK Job-UUID: j', NO_BODY)
  t.equal(o.replyPending, false)
})
