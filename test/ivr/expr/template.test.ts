import t from 'tap'
import { hasTemplate, interpolate, parseTemplate, renderTemplate, type Value } from '../../../src/ivr/expr/index.js'
import { tokyo } from './helpers.js'

const vars = new Map<string, Value>([
  ['name', 'Taro'],
  ['data', { balance: 1200, items: ['x'] }],
  ['n', 3],
])
const render = (src: string) => {
  const r = interpolate(src, vars, tokyo)
  return r.ok ? r.value : `error: ${r.error}`
}

t.test('interpolation renders values with str()', async (t) => {
  t.equal(render('Hello {{ name }}'), 'Hello Taro')
  t.equal(render('{{name}}{{name}}'), 'TaroTaro')
  t.equal(render('Balance: {{ data.balance }} yen'), 'Balance: 1200 yen')
  t.equal(render('{{ n * 2 + 0.5 }}'), '6.5')
  t.equal(render('[{{ nobody }}]'), '[]')
  t.equal(render('{{ n GT 2 }}'), 'true')
  t.equal(render('{{ data.items }}'), '["x"]')
  t.equal(render('{{ data }}'), '{"balance":1200,"items":["x"]}')
  t.equal(render('no template'), 'no template')
  t.equal(render(''), '')
  t.equal(render('https://x.test/a?b={{ name }}&c={{ n }}'), 'https://x.test/a?b=Taro&c=3')
  t.equal(render('{{ hour() }}:{{ minute() }}'), '8:30')
})

t.test("a literal {{ is written {{ '{{' }}, and }} inside strings does not close", async (t) => {
  t.equal(render("{{ '{{' }} name }}"), '{{ name }}')
  t.equal(render("{{ '}}' }}"), '}}')
  t.equal(render("{{ 'it\\'s }}' }}"), "it's }}")
  t.equal(render('a }} b'), 'a }} b')
})

t.test('template syntax errors', async (t) => {
  t.match(parseTemplate('Hello {{ name'), { ok: false, error: /\{\{ at character 7 has no closing \}\}/ })
  t.match(parseTemplate('{{ }}'), { ok: false, error: /empty \{\{ \}\}/ })
  t.match(parseTemplate('{{ 1 + }}'), { ok: false, error: /in \{\{ 1 \+ \}\}: expected a value/ })
  t.match(parseTemplate("{{ 'abc }}"), { ok: false, error: /no closing/ })
  t.match(parseTemplate('{{ foo() }}'), { ok: false, error: /unknown function foo/ })
})

t.test('run-time errors name the expression', async (t) => {
  t.equal(render('{{ 1 / 0 }}'), 'error: in {{ 1 / 0 }}: division by zero')
  t.equal(render("x{{ name + 1 }}"), 'error: in {{ name + 1 }}: cannot apply + to string and number (convert with str(), int() or float())')
})

t.test('parse once, render many times', async (t) => {
  const tpl = parseTemplate('Hi {{ name }}')
  if (!tpl.ok) return t.fail(tpl.error)
  t.same(tpl.value.parts.map((p) => p.kind), ['text', 'expr'])
  t.same(renderTemplate(tpl.value, { name: 'A' }, tokyo), { ok: true, value: 'Hi A' })
  t.same(renderTemplate(tpl.value, { name: 'B' }, tokyo), { ok: true, value: 'Hi B' })
  t.same(renderTemplate(tpl.value, {}, tokyo), { ok: true, value: 'Hi ' })
})

t.test('rendered text is bounded', async (t) => {
  const big = new Map<string, Value>([['s', 'x'.repeat(40000)]])
  t.match(interpolate('{{ s }}{{ s }}', big, tokyo), { ok: false, error: /longer than 65536/ })
})

t.test('hasTemplate', async (t) => {
  t.equal(hasTemplate('a {{ b }}'), true)
  t.equal(hasTemplate('a { b }'), false)
  t.equal(hasTemplate('a }} b'), false)
})
