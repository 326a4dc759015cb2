/**
 * src/pbx/esl-reader.ts: how the socket is read for the daemon and for esl-lite. The cutting into
 * whole messages, whatever TCP's cuts, and the order of events against what esl-lite reads are
 * pinned in esl-framing.test.ts (through esl-lite's own parser); here: when an event is taken
 * (at once, or only once esl-lite asked past what came before it), and how the iterator ends
 * (as Node's stream iterator does, which esl-lite was written against).
 */
import t from 'tap'
import { PassThrough } from 'node:stream'
import { wholeMessages } from '../../src/pbx/esl-reader.js'
import { frameEvent } from './mini-esl.js'

const REPLY = 'Content-Type: command/reply\nReply-Text: +OK Job-UUID: j1\n\n'
const event = (uuid: string) => frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': uuid })
const uuidOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as Record<string, string>)['Unique-ID'] ?? '?'
/** Lets the stream emit what was written ('data' comes on a later tick). */
const settle = () => new Promise((r) => setImmediate(r))

function reader() {
  const socket = new PassThrough()
  const taken: string[] = []
  let refuse = false
  let fail: Error | undefined
  const it = wholeMessages(socket, (body) => {
    if (fail !== undefined) throw fail
    if (refuse) return false
    taken.push(uuidOf(body))
    return true
  })
  return {
    socket,
    it,
    taken,
    refuseNext: () => (refuse = true),
    failNext: (e: Error) => (fail = e),
  }
}

t.test('events are taken as they arrive, while esl-lite waits for something else', async (t) => {
  const r = reader()
  let handed: Buffer | undefined
  void r.it.next().then((x) => (handed = x.value as Buffer | undefined))
  r.socket.write(event('a') + event('b'))
  await settle()
  t.same(r.taken, ['a', 'b'], 'both taken from the socket callback')
  t.equal(handed, undefined, 'esl-lite was handed nothing')
  r.socket.write(REPLY)
  await settle()
  t.equal(handed?.toString(), REPLY, 'the reply goes to esl-lite')
})

t.test('an event after a reply waits until esl-lite asks past the reply', async (t) => {
  const r = reader()
  const first = r.it.next()
  r.socket.write(REPLY + event('after-reply'))
  t.equal((await first).value?.toString(), REPLY)
  await settle()
  t.same(r.taken, [], 'not taken while esl-lite handles the reply')
  r.socket.write(event('later'))
  await settle()
  t.same(r.taken, [], 'nor an event arriving meanwhile')
  const second = r.it.next()
  t.same(r.taken, ['after-reply', 'later'], 'taken, in order, as esl-lite asks for more')
  r.socket.end()
  t.equal((await second).done, true)
})

t.test('before esl-lite first asks, events are taken; a reply waits for it', async (t) => {
  const r = reader()
  r.socket.write(event('x') + REPLY + event('y'))
  await settle()
  t.same(r.taken, ['x'])
  t.equal((await r.it.next()).value?.toString(), REPLY)
  t.same(r.taken, ['x'], 'y follows the reply: not yet')
  void r.it.next()
  t.same(r.taken, ['x', 'y'])
})

t.test('a refused event goes to esl-lite in its place', async (t) => {
  const r = reader()
  const first = r.it.next()
  r.refuseNext()
  r.socket.write(event('refused'))
  t.equal((await first).value?.toString(), event('refused'))
})

t.test('the end: everything is handed on first, then done; a trailing piece of a message last', async (t) => {
  const r = reader()
  r.socket.write(REPLY + REPLY.slice(0, 10))
  r.socket.end()
  t.equal((await r.it.next()).value?.toString(), REPLY)
  t.equal((await r.it.next()).value?.toString(), REPLY.slice(0, 10), 'esl-lite reports what is left')
  t.equal((await r.it.next()).done, true)
})

t.test("the socket's error, after what came before it", async (t) => {
  const r = reader()
  r.socket.write(REPLY)
  await settle()
  r.socket.destroy(new Error('ECONNRESET'))
  t.equal((await r.it.next()).value?.toString(), REPLY)
  await t.rejects(r.it.next(), /ECONNRESET/)
})

t.test('a socket closed without its end: ERR_STREAM_PREMATURE_CLOSE, as from Node\'s iterator', async (t) => {
  const r = reader()
  const next = r.it.next()
  r.socket.destroy()
  await t.rejects(next, { code: 'ERR_STREAM_PREMATURE_CLOSE' })
})

t.test('esl-lite leaving its loop destroys the socket with an error (esl-lite reconnects on it)', async (t) => {
  const r = reader()
  const errors: Error[] = []
  r.socket.on('error', (e) => errors.push(e))
  await r.it.return?.()
  await settle()
  t.ok(r.socket.destroyed, 'destroyed')
  t.equal(errors[0]?.name, 'AbortError', 'with an error, so that esl-lite sees it end')
})

t.test('a taker that throws fails the iterator and the socket', async (t) => {
  const r = reader()
  const errors: Error[] = []
  r.socket.on('error', (e) => errors.push(e))
  const next = r.it.next()
  r.failNext(new Error('listener bug'))
  r.socket.write(event('boom') + event('never'))
  await t.rejects(next, /listener bug/)
  await settle()
  t.ok(r.socket.destroyed)
  t.equal(errors[0]?.message, 'listener bug')
  t.same(r.taken, [])
})
