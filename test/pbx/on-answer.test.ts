/**
 * The originate's on-answer actions (pbx/commands.ts OnAnswer; issue 29 item 3): the time limit as
 * `sched_hangup +<n> ALLOTTED_TIMEOUT` and the DTMF as `send_dtmf <digits>`, each in an
 * `execute_on_answer*` variable that FreeSWITCH's own parse of the originate (test/pbx/fs-model.ts,
 * after mod_commands.c and switch_ivr_originate.c) reads back whole; out-of-range limits and
 * hostile digits are refused, and no caller may set an `execute_on_*` or `api_on_*` variable.
 */
import t from 'tap'
import { originate, type OriginateSpec } from '../../src/pbx/commands.js'
import { parseOriginate } from './fs-model.js'

const LEG = '11111111-1111-4111-8111-111111111111'
const spec = (extra: Partial<OriginateSpec>): OriginateSpec => ({
  legs: [{ uuid: LEG, endpoint: { kind: 'user', user: 'bob', domain: 'example.test' } }],
  timeoutSec: 30,
  target: { kind: 'dialplan', extension: 'cod_route', context: 'example.test' },
  ...extra,
})

t.test('both actions become execute_on_answer variables FreeSWITCH reads whole', async (t) => {
  const r = originate(spec({ onAnswer: { hangupAfterSec: 3, sendDigits: '12w#W*AD' } }))
  if (!r.ok) throw new Error(JSON.stringify(r.error))
  const parsed = parseOriginate(r.value)
  t.equal(parsed.globals.get('execute_on_answer_cod_time_limit'), 'sched_hangup +3 ALLOTTED_TIMEOUT')
  t.equal(parsed.globals.get('execute_on_answer_cod_send_digits'), 'send_dtmf 12w#W*AD')
  t.match(r.value, / cod_route XML example\.test$/, 'the target is untouched by the quoted spaces')
})

t.test('without onAnswer, none', async (t) => {
  const r = originate(spec({}))
  t.ok(r.ok)
  if (r.ok) t.notMatch(r.value, /execute_on_answer/)
  const one = originate(spec({ onAnswer: { sendDigits: '1' } }))
  if (one.ok) t.notMatch(one.value, /sched_hangup/)
})

t.test('a time limit outside 1..86400 or not whole is refused', async (t) => {
  for (const n of [0, -1, 86_401, 1.5, Number.NaN]) {
    const r = originate(spec({ onAnswer: { hangupAfterSec: n } }))
    t.notOk(r.ok, String(n))
    if (!r.ok) t.equal(r.error.field, 'onAnswer.hangupAfterSec')
  }
  t.ok(originate(spec({ onAnswer: { hangupAfterSec: 86_400 } })).ok)
})

t.test('hostile digits are refused', async (t) => {
  for (const d of ['', '1 2', "1'", '1,2', '1}', '1\n', '1+2', '1@500', '~1', '${api(status)}', 'E', '1'.repeat(65), "1' 'api_on_answer=x"]) {
    const r = originate(spec({ onAnswer: { sendDigits: d } }))
    t.notOk(r.ok, JSON.stringify(d))
    if (!r.ok) t.equal(r.error.field, 'onAnswer.sendDigits')
  }
})

t.test('no caller sets an execute_on_* or api_on_* variable', async (t) => {
  for (const name of ['execute_on_answer', 'EXECUTE_ON_ANSWER_1', 'execute_on_media', 'api_on_answer_2', 'api_on_hangup']) {
    const global = originate(spec({ vars: { [name]: 'hangup' } }))
    t.notOk(global.ok, name)
    const leg = originate(spec({ legs: [{ uuid: LEG, endpoint: { kind: 'user', user: 'bob', domain: 'example.test' }, vars: { [name]: 'hangup' } }] }))
    t.notOk(leg.ok, `${name} on a leg`)
  }
})
