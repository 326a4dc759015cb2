/**
 * time_limit and send_digits (issue 29 item 3) on the four operations: accepted into the plan,
 * the domain's max_call_seconds as the default and as the most a request may ask for (refused
 * above it, naming it), hostile values refused before anything is originated; and the plan's
 * fields reach the originate as FreeSWITCH's on-answer actions (origination/originate-spec.ts).
 */
import t from 'tap'
import type { LoadedConfig } from '../../src/config/load.js'
import { buildOriginate } from '../../src/origination/originate-spec.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { parseOriginate } from '../pbx/fs-model.js'
import { exampleConfig, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(h.close)

/** A body of each operation that places a call. */
const BODIES: Record<string, Record<string, unknown>> = {
  call_user: { user_name: 'alice', destination: 'bob' },
  call_group: { group_name: 'sales', destination: '0311112222' },
  call_external: { target: '0311112222', destination: 'alice' },
  initiate_call: { user_name: 'alice', destination: '0311112222' },
}

t.test('each operation takes both fields into its plan', async (t) => {
  for (const [op, body] of Object.entries(BODIES)) {
    const { good } = operation(h, op)
    const plan = await good(t, { ...body, time_limit: 3, send_digits: '1w2W#*AD' })
    t.equal(plan?.timeLimitSec, 3, op)
    t.equal(plan?.sendDigits, '1w2W#*AD', op)
    t.equal((await good(t, { ...body, time_limit: '086400' }))?.timeLimitSec, 86_400, `${op}: a string of digits`)
    const none = await good(t, body)
    t.notOk(none !== undefined && 'timeLimitSec' in none, `${op}: no time limit when neither the request nor the domain has one`)
    t.notOk(none !== undefined && 'sendDigits' in none)
  }
})

t.test('bad values are refused before anything is originated', async (t) => {
  for (const [op, body] of Object.entries(BODIES)) {
    const { bad } = operation(h, op)
    for (const time_limit of [0, -1, 86_401, 1.5, '86401', '1 ', 'x', null, true, '']) {
      await bad(t, { ...body, time_limit }, 400, 'invalid_parameter', 'time_limit')
    }
    for (const send_digits of ['', '1 2', "1'", '1&2', '1\nuuid_kill x', '${api(status)}', '1+2', '1@100', '~1', 'E', '1'.repeat(65), 12]) {
      await bad(t, { ...body, send_digits }, 400, 'invalid_parameter', 'send_digits')
    }
  }
})

t.test("the domain's max_call_seconds: the default, and the most a request may ask for", async (t) => {
  const base = await exampleConfig()
  const before = h.runtime
  t.teardown(() => (h.runtime = before))
  const config: LoadedConfig = { ...base, domains: base.domains.map((d, i) => (i === 0 ? { ...d, max_call_seconds: 600 } : d)) }
  h.runtime = runtimeOf(config)
  for (const [op, body] of Object.entries(BODIES)) {
    const { good, bad } = operation(h, op)
    t.equal((await good(t, body))?.timeLimitSec, 600, `${op}: the domain's max when the request says nothing`)
    t.equal((await good(t, { ...body, time_limit: 30 }))?.timeLimitSec, 30, `${op}: a shorter limit of the request`)
    t.equal((await good(t, { ...body, time_limit: 600 }))?.timeLimitSec, 600)
    const r = await bad(t, { ...body, time_limit: 601 }, 400, 'invalid_parameter', 'time_limit')
    t.match(r.text, /at most 600 seconds/, 'the refusal names the max')
  }
})

t.test('the plan\'s fields reach the originate as on-answer actions', async (t) => {
  const { good } = operation(h, 'call_user')
  const plan = await good(t, { ...BODIES.call_user, time_limit: 7, send_digits: '9w1' })
  if (plan === undefined) throw new Error('no plan')
  const dom = h.runtime.directory.domain(plan.domain)
  const cmd = buildOriginate(plan, plan.domain, dom, [{ uuid: '11111111-1111-4111-8111-111111111111', endpoint: { kind: 'user', user: 'alice', domain: plan.domain } }], 30)
  if (!cmd.ok) throw new Error(JSON.stringify(cmd.error))
  const parsed = parseOriginate(cmd.value)
  t.equal(parsed.globals.get('execute_on_answer_cod_time_limit'), 'sched_hangup +7 ALLOTTED_TIMEOUT')
  t.equal(parsed.globals.get('execute_on_answer_cod_send_digits'), 'send_dtmf 9w1')
  const plain = await good(t, BODIES.call_user)
  if (plain === undefined) throw new Error('no plan')
  const cmd2 = buildOriginate(plain, plain.domain, dom, [{ uuid: '11111111-1111-4111-8111-111111111111', endpoint: { kind: 'user', user: 'alice', domain: plain.domain } }], 30)
  t.ok(cmd2.ok && !cmd2.value.includes('execute_on_answer'), 'none without them')
})
