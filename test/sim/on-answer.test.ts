/**
 * The simulator against the real FreeSWITCH 1.10.12 captures of issue 29
 * (test/fixtures/freeswitch/esl/33-time-limit-send-digits.txt, 34-call-commands.txt): the
 * originate's `execute_on_answer*` variables run at the answer (sched_hangup, send_dtmf: their
 * CHANNEL_EXECUTE pairs between CHANNEL_ANSWER and the call state ACTIVE), the leg hung up
 * ALLOTTED_TIMEOUT; `uuid_recv_dtmf` and `uuid_hold [off]` answer and fire what FreeSWITCH does.
 */
import t from 'tap'
import { capturedEvents, type CapturedEvent } from './captured-events.js'
import { startSim, type Ev } from './helpers.js'

const A = 'aaaaaaaa-2929-4929-8929-0000000000a1'
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const EVENTS =
  'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_EXECUTE CHANNEL_EXECUTE_COMPLETE CHANNEL_HANGUP CHANNEL_HANGUP_COMPLETE CHANNEL_DESTROY DTMF CHANNEL_HOLD CHANNEL_UNHOLD CHANNEL_CALLSTATE BACKGROUND_JOB'

/** A leg's events as `NAME app data/state/digit`, from its CHANNEL_ANSWER to its CHANNEL_CALLSTATE ACTIVE. */
function atAnswer(events: ReadonlyArray<Record<string, unknown>>, uuid: string): string[] {
  const list = events
    .filter((e) => e['Unique-ID'] === uuid)
    .map((e) => [e['Event-Name'], e['Application'], e['Application-Data'], e['Event-Name'] === 'CHANNEL_CALLSTATE' ? e['Channel-Call-State'] : undefined].filter((x) => x !== undefined).join(' '))
  const from = list.indexOf('CHANNEL_ANSWER')
  return list.slice(from, list.indexOf('CHANNEL_CALLSTATE ACTIVE', from) + 1)
}

/** A leg's hold and DTMF events, as in the capture. */
function holdAndDtmf(events: ReadonlyArray<Record<string, unknown>>, uuid: string): string[] {
  return events
    .filter((e) => e['Unique-ID'] === uuid && ['DTMF', 'CHANNEL_HOLD', 'CHANNEL_UNHOLD', 'CHANNEL_CALLSTATE'].includes(String(e['Event-Name'])))
    .map((e) => (e['Event-Name'] === 'DTMF' ? `DTMF ${String(e['DTMF-Digit'])} ${String(e['DTMF-Source'])}` : `${String(e['Event-Name'])} ${String(e['Channel-Call-State'])}`))
}

const firstCreated = (events: readonly CapturedEvent[]): string => events.find((e) => e['Event-Name'] === 'CHANNEL_ANSWER')?.['Unique-ID'] ?? ''

async function answeredLeg(t: { teardown: (fn: () => unknown) => void }, globals: string) {
  const { sim, connect } = await startSim(t)
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  const c = await connect()
  await c.login('ClueCon', EVENTS)
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=20${globals}}user/alice@example.test &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_CALLSTATE' && e['Unique-ID'] === A && e['Channel-Call-State'] === 'ACTIVE')
  return c
}

t.test('esl/33: execute_on_answer runs sched_hangup and send_dtmf at the answer; the leg ends ALLOTTED_TIMEOUT', async (t) => {
  const captured = capturedEvents('33-time-limit-send-digits.txt')
  const expected = atAnswer(captured, firstCreated(captured))
  t.same(expected, [
    'CHANNEL_ANSWER',
    'CHANNEL_EXECUTE sched_hangup +3 ALLOTTED_TIMEOUT',
    'CHANNEL_EXECUTE_COMPLETE sched_hangup +3 ALLOTTED_TIMEOUT',
    'CHANNEL_EXECUTE send_dtmf 12w#',
    'CHANNEL_EXECUTE_COMPLETE send_dtmf 12w#',
    'CHANNEL_CALLSTATE ACTIVE',
  ], 'what the real switch did')
  const c = await answeredLeg(t, ",execute_on_answer_cod_time_limit='sched_hangup +3 ALLOTTED_TIMEOUT',execute_on_answer_cod_send_digits='send_dtmf 12w#'")
  t.same(atAnswer(c.events(), A), expected, 'the simulator does the same')
  const complete = c.events().find((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE' && e['Application'] === 'send_dtmf')
  t.equal(complete?.['Application-Response'], '_none_')
  const hangup = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A, 5000)
  t.equal(hangup['Hangup-Cause'], 'ALLOTTED_TIMEOUT')
  t.equal(captured.find((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === firstCreated(captured))?.['Hangup-Cause'], 'ALLOTTED_TIMEOUT')
})

t.test('sched_hangup without a cause is ALLOTTED_TIMEOUT (mod_dptools.c sched_hangup_function)', async (t) => {
  const c = await answeredLeg(t, ",execute_on_answer='sched_hangup +1'")
  const hangup = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A, 5000)
  t.equal(hangup['Hangup-Cause'], 'ALLOTTED_TIMEOUT')
})

t.test('esl/34: uuid_recv_dtmf and uuid_hold [off]: replies and events as the real switch', async (t) => {
  const captured = capturedEvents('34-call-commands.txt')
  const a = firstCreated(captured)
  const jobs = captured.filter((e) => e['Event-Name'] === 'BACKGROUND_JOB').map((e) => `${e['Job-Command'] ?? ''}: ${(e['_body'] ?? '').replaceAll(a, '<A>').trim()}`)
  t.same(jobs.slice(1, 6), ['uuid_recv_dtmf: +OK <A> received DTMF 1#.', 'uuid_hold: +OK Success', 'uuid_hold: +OK Success', 'uuid_hold: +OK Success', 'uuid_recv_dtmf: -ERR Cannot locate session!'])
  const all = holdAndDtmf(captured, a).filter((l) => !/HANGUP/.test(l))
  const expected = all.slice(all.findIndex((l) => l.startsWith('DTMF')))
  const c = await answeredLeg(t, '')
  const from = c.events().length
  t.equal(await c.api(`uuid_recv_dtmf ${A} 1#`), `+OK ${A} received DTMF 1#.\n`)
  t.equal(await c.api(`uuid_hold ${A}`), '+OK Success\n')
  t.equal(await c.api(`uuid_hold ${A}`), '-ERR Operation failed\n', 'already on hold (switch_ivr_hold)')
  t.equal(await c.api(`uuid_hold off ${A}`), '+OK Success\n')
  t.equal(await c.api(`uuid_hold off ${A}`), '-ERR Operation failed\n', 'not on hold (switch_ivr_unhold)')
  t.equal(await c.api(`uuid_hold ${UNKNOWN}`), '+OK Success\n', 'an unknown uuid: +OK Success, as captured')
  t.equal(await c.api(`uuid_recv_dtmf ${UNKNOWN} 1`), '-ERR Cannot locate session!\n')
  t.equal(await c.api(`uuid_recv_dtmf ${A}`), '-USAGE: <uuid> <dtmf_data>\n')
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_UNHOLD')
  const seen = holdAndDtmf(c.events().slice(from) as Ev[], A).filter((l) => !/HANGUP/.test(l))
  t.same(seen, expected, 'the events of the capture, in its order')
  t.same(expected, ['DTMF 1 APP', 'DTMF # APP', 'CHANNEL_CALLSTATE HELD', 'CHANNEL_HOLD HELD', 'CHANNEL_CALLSTATE UNHELD', 'CHANNEL_UNHOLD UNHELD', 'CHANNEL_CALLSTATE ACTIVE'])
})
