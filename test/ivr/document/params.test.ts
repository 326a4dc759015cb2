import t from 'tap'
import { resolveOptional, resolveParam, type IvrElement, type Value } from '../../../src/ivr/document/index.js'
import type { GetDigits } from '../../../src/ivr/elements/index.js'
import { first } from './helpers.js'

const env = { timeZone: 'Asia/Tokyo', now: () => new Date('2024-03-04T01:00:00Z') }

function get<T extends IvrElement['type']>(inner: string, type: T): Extract<IvrElement, { type: T }> {
  const e = first(inner)
  if (e.type !== type) throw new Error(`expected ${type}, got ${e.type}`)
  return e as Extract<IvrElement, { type: T }>
}

t.test('literal values resolve to themselves', async (t) => {
  const g = get('<GetDigits timeout="7"/>', 'GetDigits')
  t.same(resolveParam(g.timeout, {}, env), { ok: true, value: 7 })
  t.same(resolveOptional(g.action, {}, env), { ok: true, value: undefined })
})

t.test('templated values are rendered and held to the literal rules', async (t) => {
  const g: GetDigits = get('<GetDigits timeout="{{ t }}" numDigits="{{ len(pin) }}" playBeep="{{ beep }}" action="https://ivr.example.test/{{ CallUUID }}?d={{ n + 1 }}"/>', 'GetDigits')
  const vars = new Map<string, Value>([['t', 10], ['pin', '1234'], ['beep', true], ['CallUUID', 'abc'], ['n', 1]])
  t.same(resolveParam(g.timeout, vars, env), { ok: true, value: 10 })
  t.same(resolveParam(g.numDigits, vars, env), { ok: true, value: 4 })
  t.same(resolveParam(g.playBeep, vars, env), { ok: true, value: true })
  t.same(resolveOptional(g.action, vars, env), { ok: true, value: ['https://ivr.example.test/abc?d=2'] })
  t.same(resolveParam(g.timeout, new Map([['t', 301]]), env), {
    ok: false,
    error: 'GetDigits timeout "{{ t }}" gave "301": must be a whole number from 1 to 300',
  })
  t.same(resolveParam(g.timeout, new Map(), env), {
    ok: false,
    error: 'GetDigits timeout "{{ t }}" gave "": must be a whole number from 1 to 300',
  })
  t.same(resolveParam(g.numDigits, new Map([['pin', 5]]), env), {
    ok: false,
    error: 'GetDigits numDigits "{{ len(pin) }}": in {{ len(pin) }}: len() of number',
  })
})

t.test('run-time checks of text, targets and sections', async (t) => {
  const p = get('<Play>{{ file }}</Play>', 'Play')
  t.same(resolveParam(p.source, { file: 'ivr/welcome.wav' }, env), { ok: true, value: { kind: 'file', name: 'ivr/welcome.wav' } })
  t.match(resolveParam(p.source, { file: '../../etc/passwd' }, env), { ok: false, error: /^Play text "\{\{ file \}\}" gave "..\/..\/etc\/passwd": must be an audio file path/ })
  t.match(resolveParam(p.source, { file: '${system(ls)}' }, env), { ok: false, error: /must be an audio file path/ })

  const tr = get('<Transfer callingNumber="{{ ani }}" failureAction="{{ fa }}" answerTimeout="{{ to }}">{{ who }}</Transfer>', 'Transfer')
  const vars = { who: 'alice', ani: '0501230000', fa: 'retry', to: '20' }
  t.same(resolveParam(tr.target, vars, env), { ok: true, value: 'alice' })
  t.same(resolveOptional(tr.callingNumber, vars, env), { ok: true, value: '0501230000' })
  t.same(resolveOptional(tr.failureAction, vars, env), { ok: true, value: { kind: 'section', name: 'retry' } })
  t.same(resolveOptional(tr.failureAction, { fa: 'https://a.test/x,https://b.test/x' }, env), {
    ok: true,
    value: { kind: 'urls', urls: ['https://a.test/x', 'https://b.test/x'] },
  })
  t.same(resolveParam(tr.answerTimeout, vars, env), { ok: true, value: 20 })
  t.match(resolveParam(tr.target, { who: 'alice,bob' }, env), { ok: false, error: /must be a user, group/ })
  t.match(resolveParam(tr.target, { who: 'a}b' }, env), { ok: false, error: /must be a user, group/ })
  t.match(resolveParam(tr.answerTimeout, { to: 1000 }, env), { ok: false, error: /from 5 to 180/ })

  const s = get('<Speak>Your balance is {{ data.balance }} yen</Speak>', 'Speak')
  t.same(resolveParam(s.text, { data: { balance: 300 } }, env), { ok: true, value: 'Your balance is 300 yen' })
  t.match(resolveParam(s.text, { data: { balance: 'x\u0007' } }, env), { ok: false, error: /must not contain control characters/ })
  const empty = get('<Speak>{{ nothing }}</Speak>', 'Speak')
  t.match(resolveParam(empty.text, {}, env), { ok: false, error: /Speak text "\{\{ nothing \}\}" gave "": must not be empty/ })

  const h = get('<Hangup reason="{{ r }}"/>', 'Hangup')
  t.same(resolveOptional(h.reason, { r: 'busy' }, env), { ok: true, value: 'busy' })
  t.match(resolveOptional(h.reason, { r: 'normal' }, env), { ok: false, error: /must be one of rejected, busy/ })
})

t.test('time functions in templates use the given zone and clock', async (t) => {
  const s = get('<Speak>It is {{ hour() }} o\'clock</Speak>', 'Speak')
  t.same(resolveParam(s.text, {}, env), { ok: true, value: "It is 10 o'clock" })
  t.same(resolveParam(s.text, {}, { ...env, timeZone: 'UTC' }), { ok: true, value: "It is 1 o'clock" })
})
