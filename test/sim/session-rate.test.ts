/**
 * The simulator's sessions-per-second ceiling against the capture of a real FreeSWITCH
 * (test/fixtures/freeswitch/esl/35-sessions-per-second.txt): `fsctl sps` reads and sets the rate
 * with the same answers; a burst of 8 originates over `fsctl sps 5` creates 4 channels and the
 * other 4 fail `-ERR DESTINATION_OUT_OF_ORDER` with no channel event; the next second has its
 * budget again. For the burst the simulator runs at timeScale 100: its second is 100 real
 * seconds, so the whole burst falls in one of them however slow the machine.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { capturedEvents } from './captured-events.js'
import { SessionRate } from '../../src/sim/core/session-rate.js'
import { startSim, type RawEsl } from './helpers.js'

const FIXTURE = '35-sessions-per-second.txt'

/** The api/response bodies of the capture, in order. */
function capturedApiReplies(): string[] {
  const text = readFileSync(new URL(`../fixtures/freeswitch/esl/${FIXTURE}`, import.meta.url), 'latin1')
  let stream = ''
  for (const m of text.matchAll(/^#### <<< RECV (\d+) bytes[^\n]*\n/gm)) stream += text.slice((m.index ?? 0) + m[0].length, (m.index ?? 0) + m[0].length + Number(m[1]))
  const replies: string[] = []
  for (let at = 0; at < stream.length; ) {
    const end = stream.indexOf('\n\n', at)
    if (end < 0) break
    const head = stream.slice(at, end)
    const length = Number(/Content-Length: (\d+)/.exec(head)?.[1] ?? 0)
    if (head.includes('Content-Type: api/response')) replies.push(stream.slice(end + 2, end + 2 + length))
    at = end + 2 + length
  }
  return replies
}

const uuid = (i: number) => `5e55a0e0-0000-4000-8000-${String(i).padStart(12, '0')}`
const ALICE = 'sofia/internal/sip:alice@127.0.0.1:5070'

/** Writes n originates back to back; each ends in a CHANNEL_CREATE or, refused, its BACKGROUND_JOB. */
async function burst(c: RawEsl, from: number, n: number): Promise<{ created: number; refused: string[] }> {
  for (let i = from; i < from + n; i++) c.socket.write(`bgapi originate {origination_uuid=${uuid(i)},originate_timeout=3}${ALICE} &park\nJob-UUID: job-${i}\n\n`)
  let created = 0
  const refused: string[] = []
  for (let i = from; i < from + n; i++) {
    const e = await c.waitFor((e) => (e['Event-Name'] === 'CHANNEL_CREATE' && e['Unique-ID'] === uuid(i)) || (e['Event-Name'] === 'BACKGROUND_JOB' && e['Job-UUID'] === `job-${i}`))
    if (e['Event-Name'] === 'CHANNEL_CREATE') created++
    else refused.push(String(e['_body']))
  }
  return { created, refused }
}

t.test('fsctl sps reads and sets the rate with FreeSWITCH answers; status shows it', async (t) => {
  const replies = capturedApiReplies()
  const [readVanilla, status, set5, read5] = replies
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  t.equal(await c.api('fsctl sps'), readVanilla, 'the vanilla rate, 30')
  const line = /\n0 session\(s\) per Sec out of max 30, peak 0, last 5min 0 \n/
  t.match(status, line, 'the capture: status on an idle switch')
  t.match(await c.api('status'), line, 'the simulator: the same line')
  t.equal(await c.api('fsctl sps 5'), set5, 'a positive N sets it')
  t.equal(await c.api('fsctl sps'), read5, 'and reads back')
  t.equal(await c.api('fsctl sps 0'), '+OK sessions per second: 5\n', '0 reads without setting')
  t.equal(replies.at(-1), '+OK sessions per second: 30\n', 'the capture: fsctl sps 0 after restoring 30')
})

t.test('a burst over the rate: as many created and refused as in the capture, no event for the refused', async (t) => {
  const captured = capturedEvents(FIXTURE)
  const capturedCreated = captured.filter((e) => e['Event-Name'] === 'CHANNEL_CREATE').length
  const capturedRefused = captured.filter((e) => e['Event-Name'] === 'BACKGROUND_JOB' && e['_body'] === '-ERR DESTINATION_OUT_OF_ORDER\n').length
  t.same([capturedCreated, capturedRefused], [4, 4], 'the capture: over sps 5, 4 of 8 created, 4 refused')

  // sessions-per-second 5 from the start (switch.conf.xml), the burst within one simulated second.
  const { connect } = await startSim(t, { timeScale: 100, sessionsPerSecond: 5 })
  const c = await connect()
  await c.login()
  const b = await burst(c, 0, 8)
  t.equal(b.created, capturedCreated, 'the first sps - 1 get a channel')
  t.same(b.refused, Array(capturedRefused).fill('-ERR DESTINATION_OUT_OF_ORDER\n'), 'the rest fail as FreeSWITCH failed them')
})

t.test('the budget comes back each second, and a new rate applies from the next one (SessionRate)', async (t) => {
  let now = 0
  const rate = new SessionRate(1000, 3, () => now)
  t.same([rate.request(), rate.request(), rate.request()], [true, true, false], 'sps 3 admits 2 a second')
  t.equal(rate.control(10), 10)
  t.notOk(rate.request(), 'the rest of this second keeps the old budget (switch_time.c refills once a second)')
  now = 1000
  t.same(Array.from({ length: 10 }, () => rate.request()), [...Array(9).fill(true), false], 'the next second has the new budget')
  now = 2000
  t.same([rate.stats().last, rate.stats().total], [10, 10], 'status: sessions asked for in the last full second, the rate')
  now = 5000
  t.equal(rate.stats().last, 0, 'an idle gap counts none')
})
