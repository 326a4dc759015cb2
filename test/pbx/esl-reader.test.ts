/**
 * src/pbx/esl-reader.ts, the one reader of the Event Socket: what it hands on, when (in the
 * socket's callback), and what it does with a message the daemon cannot read. That it cuts any
 * TCP chunking into the same whole messages, in order, is pinned in esl-framing.test.ts.
 */
import t from 'tap'
import { Readable } from 'node:stream'
import { EslReader } from '../../src/pbx/esl-reader.js'
import { frameEvent, readMessages as read } from './mini-esl.js'

t.test('handed on in the socket callback itself: a chunk of events is read in one synchronous pass', async (t) => {
  const source = new Readable({ read() {} })
  const seen: string[] = []
  new EslReader(source, { event: (b) => seen.push(b.toString()) > 0, reply: () => {}, authRequest: () => {}, disconnectNotice: () => {} })
  source.emit('data', Buffer.from(frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'a' }) + frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'b' })))
  t.equal(seen.length, 2, 'both, before emit() returned')
})

t.test('the greeting, the notice, and what the reader does not read: the socket is dropped, nothing after it handed on', async (t) => {
  t.same(read([Buffer.from('Content-Type: auth/request\n\nContent-Type: text/disconnect-notice\nContent-Length: 2\n\nby')]), ['auth/request', 'disconnect-notice'])
  const after = frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'after' })
  const refused = read([Buffer.from(frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'no' }) + after)], (b) => !b.includes('"no"'))
  t.same(refused, ['destroyed: Event Socket: an event body that is no event'], 'an event refused')
  const unknown = read([Buffer.from(`Content-Type: text/rude-rejection\nContent-Length: 2\n\nno${after}`)])
  t.equal(unknown.length, 1)
  t.match(unknown[0], /^destroyed: Event Socket: a message of an unexpected type: "Content-Type: text\/rude-rejection/, 'an unknown Content-Type')
  t.match(read([Buffer.from(`Reply-Text: +OK\n\n${after}`)])[0], /^destroyed: .*unexpected type/, 'no Content-Type')
  const source = new Readable({ read() {} })
  const errors: Error[] = []
  source.on('error', (e) => errors.push(e))
  let calls = 0
  new EslReader(source, {
    event: () => {
      calls++
      throw new Error('listener bug')
    },
    reply: () => {},
    authRequest: () => {},
    disconnectNotice: () => {},
  })
  source.emit('data', Buffer.from(after + after))
  await new Promise((r) => setImmediate(r))
  t.equal(calls, 1, 'a handler that throws: nothing more is read')
  t.equal(errors[0]?.message, 'Event Socket: listener bug')
  t.ok(source.destroyed)
})

t.test('a trailing piece of a message when the socket ends: never handed on', async (t) => {
  t.same(read([Buffer.from('Content-Type: command/reply\nReply-Te')]), [])
})

