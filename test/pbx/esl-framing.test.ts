/**
 * src/pbx/esl-framing.ts: esl-lite 3.2.0 loses a message whose headers' blank line ("\n\n") TCP
 * splits between two chunks; the daemon hands its parser whole messages only. Found when the
 * scale benchmark's daemon missed one CHANNEL_DESTROY of 10,000 (docs/bench.md).
 */
import t, { type Test } from 'tap'
import { Readable } from 'node:stream'
import { FreeSwitchParser } from 'esl-lite'
import { connectPbx } from '../../src/pbx/connection.js'
import { frameAt, scanMessages, type EventTaker } from '../../src/pbx/esl-framing.js'
import { wholeMessages } from '../../src/pbx/esl-reader.js'
import type { FsEvent } from '../../src/pbx/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { frameEvent, startMiniEsl } from './mini-esl.js'

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child: () => silent } as never

/** Messages as FreeSWITCH frames them: events, a header-only reply, and an api/response whose body holds blank lines. */
const apiBody = 'uuid,direction\n\nline after a blank line\n\n'
const MESSAGES = [
  frameEvent({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': 'u1', 'Hangup-Cause': 'NORMAL_CLEARING' }),
  'Content-Type: command/reply\nReply-Text: +OK\n\n',
  `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(apiBody)}\n\n${apiBody}`,
  frameEvent({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': 'u1', variable_note: 'caf\u00e9 \u2603' }),
  frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'u2' }),
]
const STREAM = Buffer.from(MESSAGES.join(''))
const BOUNDARIES = MESSAGES.reduce<number[]>((acc, m) => [...acc, (acc.at(-1) ?? 0) + Buffer.byteLength(m)], [])
/** What esl-lite is handed: the same messages, the api/response as the command/reply it waits for, same body. */
const HANDED_MESSAGES = MESSAGES.map((m) =>
  m.startsWith('Content-Type: api/response\n') ? `Content-Type: command/reply\nContent-Length: ${Buffer.byteLength(apiBody)}\n\n${apiBody}` : m,
)
const HANDED = Buffer.from(HANDED_MESSAGES.join(''))
const HANDED_BOUNDARIES = HANDED_MESSAGES.reduce<number[]>((acc, m) => [...acc, (acc.at(-1) ?? 0) + Buffer.byteLength(m)], [])

/** What esl-lite's own parser makes of these chunks: the bodies (or header lines) in order. */
async function parse(chunks: readonly Buffer[]): Promise<string[]> {
  const out: string[] = []
  for await (const m of FreeSwitchParser(Readable.from(chunks), silent)) {
    if (m instanceof Error) out.push(`error: ${m.name}`)
    else out.push(m.body.length > 0 ? m.body.toString('utf8') : (m.headers.contentType ?? '?'))
  }
  return out
}

async function collect(chunks: readonly Buffer[]): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const c of wholeMessages(Readable.from(chunks))) out.push(c)
  return out
}

const splitAt = (buf: Buffer, cuts: readonly number[]): Buffer[] => {
  const at = [0, ...cuts, buf.length]
  return at.slice(1).map((end, i) => buf.subarray(at[i], end))
}

t.test("esl-lite 3.2.0's parser loses a message split between its two newlines (why esl-framing.ts exists)", async (t) => {
  const whole = await parse([STREAM])
  t.equal(whole.length, MESSAGES.length, 'in one chunk: every message')
  const destroyStart = BOUNDARIES[2] ?? 0
  const cut = STREAM.indexOf('\n\n', destroyStart) + 1
  const split = await parse(splitAt(STREAM, [cut]))
  t.not(split.length, MESSAGES.length, `split after the first newline at byte ${cut}: not every message comes out (${split.length} of ${MESSAGES.length}). If this fails, esl-lite parses split messages now and esl-framing.ts can go`)
  t.notOk(split.some((b) => b.includes('CHANNEL_DESTROY')), 'the CHANNEL_DESTROY is lost')
})

t.test('every chunk wholeMessages hands on ends where a message ends, whatever the cuts', async (t) => {
  const expected = await parse([STREAM])
  t.equal(expected[2], apiBody, 'esl-lite reads the api/response body as the reply to its command')
  let cases = 0
  for (let cut = 1; cut < STREAM.length; cut++) {
    const out = await collect(splitAt(STREAM, [cut]))
    cases++
    if (!Buffer.concat(out).equals(HANDED)) t.fail(`cut at ${cut}: bytes changed`)
    let end = 0
    for (const c of out) {
      end += c.length
      if (!HANDED_BOUNDARIES.includes(end)) t.fail(`cut at ${cut}: a chunk ends at ${end}, inside a message`)
    }
    if (JSON.stringify(await parse(out)) !== JSON.stringify(expected)) t.fail(`cut at ${cut}: esl-lite reads something else`)
  }
  // Random cuts into many small pieces (one byte included).
  let seed = 7
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  for (let i = 0; i < 300; i++) {
    const cuts = [...new Set(Array.from({ length: 1 + Math.floor(random() * 40) }, () => 1 + Math.floor(random() * (STREAM.length - 1))))].sort((a, b) => a - b)
    const out = await collect(splitAt(STREAM, cuts))
    cases++
    if (!Buffer.concat(out).equals(HANDED)) t.fail(`cuts ${cuts.join(',')}: bytes changed`)
    if (JSON.stringify(await parse(out)) !== JSON.stringify(expected)) t.fail(`cuts ${cuts.join(',')}: esl-lite reads something else`)
  }
  t.pass(`${cases} ways of cutting ${STREAM.length} bytes: same bytes (the api/response as a command/reply), whole messages, esl-lite reads all ${MESSAGES.length}`)
})

/**
 * Runs the chunks through wholeMessages with a taker, into esl-lite's own parser, as the daemon's
 * socket runs: one log of what esl-lite read and what the taker took, in the order they happened.
 */
async function handled(chunks: readonly Buffer[], take: (body: string) => boolean): Promise<string[]> {
  const log: string[] = []
  const taker: EventTaker = (body) => {
    const text = body.toString('utf8')
    if (!take(text)) return false
    log.push(`taken ${text}`)
    return true
  }
  for await (const m of FreeSwitchParser(wholeMessages(Readable.from(chunks), taker), silent)) {
    if (m instanceof Error) log.push(`error: ${m.name}`)
    else log.push(`esl-lite ${m.body.length > 0 ? m.body.toString('utf8') : (m.headers.contentType ?? '?')}`)
  }
  return log
}

/** What `handled` must log: the events taken, everything else read by esl-lite, in stream order. */
const inOrder = (takeBody: (body: string) => boolean) =>
  MESSAGES.map((m) => {
    const blank = m.indexOf('\n\n')
    const body = m.slice(blank + 2)
    const isEvent = m.slice(0, blank).split('\n').includes('Content-Type: text/event-json')
    if (isEvent && takeBody(body)) return `taken ${body}`
    return `esl-lite ${body.length > 0 ? body : (m.slice(0, blank).match(/Content-Type: (.*)/)?.[1] ?? '?')}`
  })

t.test('takeEvent: every event is taken in its place in the stream, after esl-lite read what came before it, whatever the cuts', async (t) => {
  const all = () => true
  const expected = inOrder(all)
  t.equal(expected.filter((l) => l.startsWith('taken')).length, 3, 'the three events are taken, the reply and the api/response are not')
  t.same(await handled([STREAM], all), expected, 'one chunk')
  let cases = 1
  for (let cut = 1; cut < STREAM.length; cut++) {
    cases++
    const log = await handled(splitAt(STREAM, [cut]), all)
    if (JSON.stringify(log) !== JSON.stringify(expected)) t.fail(`cut at ${cut}: ${JSON.stringify(log)}`)
  }
  let seed = 11
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  for (let i = 0; i < 200; i++) {
    const cuts = [...new Set(Array.from({ length: 1 + Math.floor(random() * 40) }, () => 1 + Math.floor(random() * (STREAM.length - 1))))].sort((a, b) => a - b)
    cases++
    const log = await handled(splitAt(STREAM, cuts), all)
    if (JSON.stringify(log) !== JSON.stringify(expected)) t.fail(`cuts ${cuts.join(',')}: ${JSON.stringify(log)}`)
  }
  t.pass(`${cases} ways of cutting: the same order every time`)
})

t.test('takeEvent: an event it refuses goes to esl-lite, in its place', async (t) => {
  const notDestroy = (body: string) => !body.includes('CHANNEL_DESTROY')
  const log = await handled([STREAM], notDestroy)
  t.same(log, inOrder(notDestroy))
  t.ok(
    log.some((l) => l.startsWith('esl-lite') && l.includes('CHANNEL_DESTROY')),
    'esl-lite read the refused CHANNEL_DESTROY',
  )
})

t.test('an api/response is handed on as the command/reply esl-lite waits for, with the same body', async (t) => {
  const body = '+OK\n'
  const api = Buffer.from(`Content-Type: api/response\nContent-Length: ${body.length}\n\n${body}`)
  const reply = async (chunks: AsyncIterable<Buffer> | Iterable<Buffer>) => {
    const out: string[] = []
    for await (const m of FreeSwitchParser(Readable.from(chunks), silent)) out.push(m instanceof Error ? `error: ${m.name}` : `${m.headers.contentType ?? '?'} ${JSON.stringify(m.body.toString())}`)
    return out
  }
  // As it is, esl-lite's client takes it for unexpected (processRawEvent: FreeSwitchUnexpectedApiResponse, dropped).
  t.same(await reply([api]), ['api/response "+OK\\n"'])
  t.same(await reply(wholeMessages(Readable.from([api]))), ['command/reply "+OK\\n"'], 'handed on: the command/reply esl-lite resolves its command with')
  const none = Buffer.from('Content-Type: api/response\nContent-Length: 0\n\n')
  t.same(await reply([Buffer.from('Content-Type: command/reply\nContent-Length: 0\n\n')]), [], "esl-lite's parser yields nothing for a Content-Length of 0")
  t.same(await reply(wholeMessages(Readable.from([none]))), ['command/reply ""'], 'so an empty output is handed on without one')
})

t.test('frameAt: which messages are text/event-json, as esl-lite reads Content-Type', async (t) => {
  const kind = (headers: string) => {
    const f = frameAt(Buffer.from(`${headers}\n\n`), 0)
    return 'end' in f ? f.type === 'event-json' : 'incomplete'
  }
  t.equal(kind('Content-Type: text/event-json'), true)
  t.equal(kind('Content-Length: 0\nContent-Type: text/event-json'), true, 'after Content-Length')
  t.equal(kind('Content-Type: text/event-json: more'), true, 'esl-lite keeps the value up to a further ": "')
  t.equal(kind('Content-Type: text/event-jsonx'), false)
  t.equal(kind('Content-Type: text/event-json:x'), false, 'a ":" without a space is part of the value')
  t.equal(kind('Content-Type: text/event-plain'), false)
  t.equal(kind('Content-Type: command/reply\nReply-Text: +OK'), false)
  t.equal(kind('Content-Type: text/event-json\nContent-Type: command/reply'), false, 'the last Content-Type wins')
  t.equal(kind('Content-Type: command/reply\nContent-Type: text/event-json'), true, 'the last Content-Type wins')
  t.equal(kind('X-Content-Type: text/event-json'), false, 'another header')
  t.equal(kind('Content-Type:  text/event-json'), false, 'a second space is part of the value')
  const type = (headers: string) => {
    const f = frameAt(Buffer.from(`${headers}\n\n`), 0)
    return 'end' in f ? f.type : 'incomplete'
  }
  t.equal(type('Content-Type: api/response\nContent-Length: 0'), 'api-response')
  t.equal(type('Content-Type: api/responses'), 'other')
  t.equal(type('Content-Type: command/reply'), 'other')
  t.equal(type('Content-Type: api/response\nContent-Type: command/reply'), 'other', 'the last Content-Type wins')
})

t.test('scanMessages: complete length and what the next message needs', async (t) => {
  const first = Buffer.byteLength(MESSAGES[0] ?? '')
  t.same(scanMessages(STREAM.subarray(0, 10)), { complete: 0, need: 0 }, 'headers not complete: nothing to wait for yet')
  const headerEnd = STREAM.indexOf('\n\n') + 2
  t.same(scanMessages(STREAM.subarray(0, headerEnd + 1)), { complete: 0, need: first }, 'headers complete: the whole length is known')
  t.same(scanMessages(STREAM.subarray(0, first)), { complete: first, need: 0 })
  t.same(scanMessages(Buffer.from('Content-Length: x\n\nnext')), { complete: 19, need: 0 }, 'a Content-Length that is no number: a message without a body, as esl-lite reads it')
  t.same(scanMessages(Buffer.alloc(0)), { complete: 0, need: 0 })
})

t.test('a trailing piece is handed on when the socket ends (esl-lite reports it)', async (t) => {
  const out = await collect([Buffer.from('Content-Type: command/reply\nReply-Te')])
  t.equal(Buffer.concat(out).toString(), 'Content-Type: command/reply\nReply-Te')
})

/** Polls `what` every 10 ms for up to 10 s; its last answer. */
const waitFor = async (what: () => boolean): Promise<boolean> => {
  const until = Date.now() + 10_000
  while (!what() && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
  return what()
}

/** The daemon's connection to a mini ESL server, closed at the test's end, once its link is up. */
async function linkedPbx(t: Test) {
  const esl = await startMiniEsl()
  const pbx = connectPbx({ host: '127.0.0.1', port: esl.port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 1000 })
  t.teardown(async () => {
    await pbx.close()
    await esl.close()
  })
  t.ok(await waitFor(() => pbx.isConnected()), 'link up')
  return { esl, pbx }
}

t.test('the daemon gets every event when TCP splits one between its two newlines', async (t) => {
  const { esl, pbx } = await linkedPbx(t)
  const seen: FsEvent[] = []
  pbx.onEvent((e) => seen.push(e))
  const events = [1, 2, 3].map((i) => frameEvent({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': `split-${i}` })).join('')
  // Each piece ends right after the first newline of a header's blank line; the pause makes them separate TCP reads.
  let from = 0
  for (;;) {
    const blank = events.indexOf('\n\n', from)
    if (blank < 0) break
    esl.sendRaw(events.slice(from, blank + 1))
    await new Promise((r) => setTimeout(r, 40))
    from = blank + 1
  }
  esl.sendRaw(events.slice(from))
  await waitFor(() => seen.length >= 3)
  t.same(
    seen.map((e) => e['Unique-ID']),
    ['split-1', 'split-2', 'split-3'],
    'all three, in order',
  )
})

t.test('the daemon reads the events itself: each delivered once, in order; a body that is no event resets the link as esl-lite did', async (t) => {
  const { esl, pbx } = await linkedPbx(t)
  const seen: FsEvent[] = []
  pbx.onEvent((e) => seen.push(e))
  const raw = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\nContent-Type: text/event-json\n\n${body}`
  esl.sendRaw(
    [
      frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'ok-1' }),
      // An array value (switch_event_serialize_json writes a multi-valued header as one): removed.
      raw('{"Event-Name":"CHANNEL_ANSWER","Unique-ID":"ok-2","variable_multi":["a","b"]}'),
      // Not subscribed, or no event name esl-lite knows (it dropped the link for those): ignored.
      frameEvent({ 'Event-Name': 'RE_SCHEDULE', 'Unique-ID': 'not-subscribed' }),
      frameEvent({ 'Event-Name': 'NOT_AN_EVENT', 'Unique-ID': 'unknown-name' }),
      frameEvent({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': 'ok-3' }),
    ].join(''),
  )
  t.ok(await waitFor(() => seen.length >= 3), 'three events delivered')
  await new Promise((r) => setTimeout(r, 100))
  t.same(seen.map((e) => e['Unique-ID']), ['ok-1', 'ok-2', 'ok-3'], 'the subscribed ones, once each, in order')
  t.notOk('variable_multi' in (seen[1] ?? {}), 'a non-string header is removed')
  t.equal(pbx.stats().connections, 1, 'the same socket all along')

  // A body esl-lite cannot read as an event (not JSON, not an object, no Event-Name) is left to
  // esl-lite, which drops the socket (its client loop breaks on such an error) and reconnects:
  // with the stream's framing in doubt, a fresh socket and a re-read of the channels are safer.
  for (const [i, bad] of ['not json {', '["CHANNEL_CREATE"]', '{"Unique-ID":"no-name"}'].entries()) {
    esl.sendRaw(raw(bad) + frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': `lost-${i}` }))
    t.ok(await waitFor(() => pbx.stats().connections === i + 2 && pbx.isConnected()), `${JSON.stringify(bad)}: the link was reset and is up again`)
  }
  t.notOk(seen.some((e) => e['Unique-ID']?.startsWith('lost-')), 'nothing after a bad body on its socket was delivered')
  esl.sendRaw(frameEvent({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': 'after' }))
  t.ok(await waitFor(() => seen.some((e) => e['Unique-ID'] === 'after')), 'events flow again on the new socket')
})
