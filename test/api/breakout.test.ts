/**
 * Break-out strings (docs/design.md "Security rules"): ESL is line-based and dial strings give
 * meaning to , | { } [ ] ^ ' and spaces; XML documents to < and ]]>. Every such string in a
 * name or a number is refused before anything reaches the engine.
 */
import t from 'tap'
import { statusOf } from '../../src/api/errors.js'
import { OPERATIONS } from '../../src/api/operations/index.js'
import { Directory } from '../../src/directory/directory.js'
import type { Operation } from '../../src/origination/plan.js'
import { exampleConfig, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const domain = new Directory((await exampleConfig()).domains).domain('example.test')
if (domain === undefined) throw new Error('example.test is missing')

const ATTACKS = [
  '\n',
  '\r\n',
  '\napi hupall',
  ',',
  '|',
  '{',
  '}',
  '[',
  ']',
  '^',
  "'",
  ' ',
  '\t',
  '<',
  ']]>',
  '"',
  '\u0000',
  '\u2028',
]
const around = (base: string): string[] => ATTACKS.flatMap((a) => [`${base}${a}`, `${a}${base}`, `${base.slice(0, 2)}${a}${base.slice(2)}`])

/** Test names show control and separator characters escaped (a raw U+2028 would break the TAP stream). */
const show = (v: unknown): string => JSON.stringify(v).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)

const cases: Array<[Operation, (v: string) => object, string]> = [
    ['call_user', (v) => ({ user_name: v, destination: 'bob' }), 'alice'],
    ['call_user', (v) => ({ user_id: v, destination: 'bob' }), '1'],
    ['call_user', (v) => ({ user_extension: v, destination: 'bob' }), '1001'],
    ['call_user', (v) => ({ user_did: v, destination: 'bob' }), '0501231001'],
    ['call_user', (v) => ({ user_email: v, destination: 'bob' }), 'alice@example.test'],
    ['call_user', (v) => ({ user_name: 'alice', destination: v }), 'bob'],
    ['call_user', (v) => ({ user_name: 'alice', destination: v }), '0311112222'],
    ['call_user', (v) => ({ user_name: 'alice', destination: { called_number: v } }), '0311112222'],
    ['call_user', (v) => ({ user_name: 'alice', destination: { called_number: '0311112222', calling_number: v } }), '0501230000'],
    ['call_user', (v) => ({ user_name: 'alice', destination: 'bob', group_name: v }), 'sales'],
    ['call_group', (v) => ({ group_name: v, destination: 'bob' }), 'sales'],
    ['call_group', (v) => ({ group_extension: v, destination: 'bob' }), '2001'],
    ['call_external', (v) => ({ target: v, destination: 'alice' }), '0311112222'],
    ['call_external', (v) => ({ target: `{name=Jane}${v}`, destination: 'alice' }), '0311112222'],
    ['call_external', (v) => ({ target: '0311112222', destination: v }), 'alice'],
    ['initiate_call', (v) => ({ pstn_number: v, destination: 'alice' }), '0311112222'],
    ['initiate_call', (v) => ({ pstn_number: '0311112222', destination: 'alice', ani: v }), '0501230000'],
    ['initiate_call', (v) => ({ user_name: v, destination: '0311112222' }), 'alice'],
]

t.test('every break-out character around and inside every name and number is refused (operation functions)', async (t) => {
  for (const [op, body, base] of cases) {
    // The base value itself is accepted: the refusals below are due to the attack alone.
    t.equal(OPERATIONS[op](body(base), domain, 'req').ok, true, `${op} ${show(body(base))} is accepted`)
    for (const value of around(base)) {
      const r = OPERATIONS[op](body(value), domain, 'req')
      const status = r.ok ? 200 : statusOf(r.error)
      t.ok(status >= 400 && status < 500, `${op} ${show(body(value))} refused (${status}${r.ok ? '' : ` ${r.error.id}`})`)
    }
  }
})

t.test('the same over HTTP, for a sample of attacks: 4xx and nothing reaches the engine', async (t) => {
  for (const [op, body, base] of cases) {
    const { call } = operation(h, op)
    t.equal((await call(body(base))).status, 200, `${op} ${show(body(base))} is accepted`)
    const before = h.engine.plans.length
    for (const value of [`${base}\napi hupall`, `${base},x`, `${base}]]>`]) {
      const r = await call(body(value))
      t.ok(r.status >= 400 && r.status < 500, `${op} ${show(body(value))} refused (${r.status})`)
    }
    t.equal(h.engine.plans.length, before, `${op}: nothing reached the engine`)
  }
})

t.test('calling_name refuses line breaks and non-ASCII; labels refuse control characters', async (t) => {
  const { bad } = operation(h, 'call_user')
  for (const calling_name of ['a\nb', 'a\r\nSIP/2.0', '\u2028', 'é', 'a\u0000']) {
    await bad(t, { user_name: 'alice', destination: 'bob', calling_name }, 400, 'invalid_parameter', 'calling_name')
  }
  await bad(t, { user_label: 'Alice\napi', destination: 'bob' }, 400, 'invalid_parameter', 'user_label')
})
