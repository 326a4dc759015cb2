import t from 'tap'
import { MAX_LIST_LENGTH, MAX_STRING_LENGTH, type Value } from '../../../src/ivr/expr/index.js'
import { run } from './helpers.js'

const value = (src: string, scope: ReadonlyMap<string, Value> | Record<string, Value> = new Map()): Value | string => {
  const r = run(src, scope)
  return r.ok ? r.value : `error: ${r.error}`
}
const errorOf = (src: string, scope: ReadonlyMap<string, Value> | Record<string, Value> = new Map()): string => {
  const r = run(src, scope)
  return r.ok ? `no error (${JSON.stringify(r.value)})` : r.error
}

const scope = new Map<string, Value>([
  ['Digits', '2'],
  ['n', 7],
  ['data', { balance: 1200.5, name: 'Taro', items: [10, 20, 30], nested: { deep: { x: 1 } }, nothing: null }],
  ['list', ['a', 'b']],
  ['empty', ''],
])

t.test('literals and variables', async (t) => {
  t.equal(value('42'), 42)
  t.equal(value('0.25'), 0.25)
  t.equal(value("'hi'"), 'hi')
  t.equal(value('true'), true)
  t.equal(value('false'), false)
  t.equal(value('null'), null)
  t.same(value("['a', 1, [true]]"), ['a', 1, [true]])
  t.equal(value('Digits', scope), '2')
  t.equal(value('data.balance', scope), 1200.5)
  t.equal(value('data.nested.deep.x', scope), 1)
  t.equal(value('data.items[1]', scope), 20)
  t.equal(value('data.items[-1]', scope), 30)
  t.equal(value("data['name']", scope), 'Taro')
  t.equal(value("'abc'[1]"), 'b')
  t.equal(value("'日本語'[-1]"), '語')
})

t.test('missing names and members are null', async (t) => {
  t.equal(value('nobody', scope), null)
  t.equal(value('data.nobody', scope), null)
  t.equal(value('data.nothing', scope), null)
  t.equal(value('nobody.x.y', scope), null)
  t.equal(value('data.items.x', scope), null) // lists have no named members (use len())
  t.equal(value('Digits.x', scope), null)
  t.equal(value('data.items[10]', scope), null)
  t.equal(value('data.items[-10]', scope), null)
  t.equal(value('nobody[0]', scope), null)
  t.equal(value("data['nobody']", scope), null)
  t.match(errorOf("data.items['x']", scope), /list index must be a whole number, got string/)
  t.match(errorOf('data.items[0.5]', scope), /whole number/)
  t.match(errorOf('data[1]', scope), /object key must be a string/)
  t.match(errorOf('n[0]', scope), /cannot index number/)
})

t.test('prototype names are plain missing names', async (t) => {
  const plain: Record<string, Value> = { Digits: '1', obj: { a: 1 } }
  for (const s of [scope, plain]) {
    for (const name of ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__']) {
      t.equal(value(name, s), null, name)
      t.equal(value(`obj.${name}`, s), null, `obj.${name}`)
      t.equal(value(`data.${name}`, s), null, `data.${name}`)
      t.equal(value(`list.${name}`, s), null, `list.${name}`)
      t.equal(value(`Digits.${name}`, s), null, `Digits.${name}`)
      t.equal(value(`obj['${name}']`, s), null, `obj['${name}']`)
      t.equal(value(`'${name}' in obj`, s), false, `'${name}' in obj`)
    }
    t.equal(value('constructor.constructor', s), null)
    t.equal(value('__proto__.__proto__', s), null)
    t.equal(value("obj.constructor['constructor']", s), null)
  }
  // Attempts to reach Function all fail harmlessly: parse errors or nulls, never code.
  t.match(errorOf("constructor.constructor('return process')()"), /parse: only the functions/)
  t.match(errorOf("data.constructor.constructor('return this')()", scope), /parse: only the functions/)
  t.match(errorOf("str.constructor('return 1')"), /parse/)
  t.match(errorOf("this"), /no error \(null\)/)
  t.match(errorOf("process.exit"), /no error \(null\)/)
  t.match(errorOf("globalThis.process"), /no error \(null\)/)
  // A JSON document that really has a key called __proto__ is data like any other.
  const json = JSON.parse('{"__proto__": {"polluted": 1}, "a": 2}') as Value
  t.same(value('j.__proto__', { j: json }), { polluted: 1 })
  t.equal(value('j.polluted', { j: json }), null)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  // Non-plain objects (not JSON data) are never looked into.
  const notPlain = new Map<string, Value>([['d', new Date(0) as unknown as Value]])
  t.equal(value('d.getTime', notPlain), null)
})

t.test('arithmetic', async (t) => {
  t.equal(value('1 + 2'), 3)
  t.equal(value('5 - 7'), -2)
  t.equal(value('6 * 7'), 42)
  t.equal(value('7 / 2'), 3.5)
  t.equal(value('7 % 3'), 1)
  t.equal(value('-7 % 3'), 2) // Python: the sign of the divisor
  t.equal(value('7 % -3'), -2)
  t.equal(value('5.5 % 2'), 1.5)
  t.equal(value('2 ** 10'), 1024)
  t.equal(value('2 ** -1'), 0.5)
  t.equal(value('-2 ** 2'), -4)
  t.equal(value('(-2) ** 2'), 4)
  t.equal(value('2 ** 3 ** 2'), 512)
  t.equal(value('-n', scope), -7)
  t.equal(value('+n', scope), 7)
  t.equal(value('- -3'), 3)
  t.equal(value('-0'), 0)
  t.ok(Object.is(value('-0'), 0), '-0 is written as 0')
  t.equal(value("'ab' + 'cd'"), 'abcd')
  t.same(value('[1] + [2, 3]'), [1, 2, 3])
  t.equal(value('1 + 2 * 3 - 4 / 2'), 5)
})

t.test('arithmetic errors are values, not exceptions', async (t) => {
  t.match(errorOf('1 / 0'), /division by zero/)
  t.match(errorOf('1 % 0'), /modulo by zero/)
  t.match(errorOf('0 ** -1'), /division by zero/)
  t.match(errorOf('10 ** 400'), /not a finite number/)
  t.match(errorOf('(-8) ** 0.5'), /not a finite number/)
  t.match(errorOf("'1' + 1"), /cannot apply \+ to string and number \(convert with str\(\), int\(\) or float\(\)\)/)
  t.match(errorOf("1 + '1'"), /cannot apply \+ to number and string/)
  t.match(errorOf('null + 1'), /cannot apply \+ to null and number/)
  t.match(errorOf("'a' - 'b'"), /cannot apply - to string and string/)
  t.match(errorOf("'a' * 3"), /cannot apply \* to string and number/)
  t.match(errorOf('[1] * 2'), /cannot apply \* to list and number/)
  t.match(errorOf('true + 1'), /cannot apply \+ to boolean and number/)
  t.match(errorOf("-'a'"), /unary - needs a number, got string/)
  t.match(errorOf('+null'), /unary \+ needs a number, got null/)
  t.match(errorOf('data + 1', scope), /cannot apply \+ to object and number/)
})

t.test('size limits on built values', async (t) => {
  const big = 'x'.repeat(MAX_STRING_LENGTH / 2 + 1)
  t.match(errorOf('s + s', { s: big }), /string longer than 65536/)
  t.equal((value('s + s', { s: 'x'.repeat(MAX_STRING_LENGTH / 2) }) as string).length, MAX_STRING_LENGTH)
  const items: Value[] = Array.from({ length: MAX_LIST_LENGTH / 2 + 1 }, () => 0)
  t.match(errorOf('l + l', { l: items }), /list longer than 10000/)
  t.match(errorOf('str(l)', { l: Array.from({ length: 40000 }, () => 'abc') }), /string longer than/)
})

t.test('comparisons', async (t) => {
  t.equal(value('1 == 1'), true)
  t.equal(value('1 == 1.0'), true)
  t.equal(value("1 == '1'"), false) // no coercion
  t.equal(value("1 != '1'"), true)
  t.equal(value('null == null'), true)
  t.equal(value('nobody == null'), true)
  t.equal(value("'' == null"), false)
  t.equal(value('0 == false'), false)
  t.equal(value('[1, [2]] == [1, [2]]'), true)
  t.equal(value('[1, 2] == [2, 1]'), false)
  t.equal(value('data == data', scope), true)
  t.equal(value('data.nested == data', scope), false)
  t.equal(value("Digits == '2'", scope), true)
  t.equal(value('3 > 2'), true)
  t.equal(value('2 > 2'), false)
  t.equal(value('2 >= 2'), true)
  t.equal(value('3 GT 2'), true)
  t.equal(value('2 GE 3'), false)
  t.equal(value('2 LT 3'), true)
  t.equal(value('3 LE 3'), true)
  t.equal(value('4 LE 3'), false)
  t.equal(value('2 < 3'), true)
  t.equal(value('3 <= 2'), false)
  t.equal(value("'b' GT 'a'"), true)
  t.equal(value("'10' LT '9'"), true) // strings compare as text: int() them to compare numbers
  t.equal(value("int(Digits) GE 2", scope), true)
  t.match(errorOf("Digits GT 1", scope), /cannot order string and number with >/)
  t.match(errorOf('null LT 1'), /cannot order null and number with </)
  t.match(errorOf('[1] GT [0]'), /cannot order list and list/)
  t.match(errorOf('true GE false'), /cannot order boolean and boolean/)
})

t.test('in and not in', async (t) => {
  t.equal(value("Digits in ['1', '2']", scope), true)
  t.equal(value("Digits in ['3']", scope), false)
  t.equal(value("Digits not in ['3']", scope), true)
  t.equal(value('2 in [1, 2]'), true)
  t.equal(value("'2' in [1, 2]"), false)
  t.equal(value('[1] in [[1], [2]]'), true)
  t.equal(value("'ar' in 'Taro'"), true)
  t.equal(value("'x' not in 'Taro'"), true)
  t.equal(value("'' in 'x'"), true)
  t.equal(value("'balance' in data", scope), true)
  t.equal(value("'nobody' in data", scope), false)
  t.equal(value('1 in data', scope), false)
  t.equal(value("'x' in nobody"), false) // nothing is in a missing value
  t.equal(value("'x' not in nobody"), true)
  t.match(errorOf("1 in 'abc'"), /'in' a string needs a string on the left, got number/)
  t.match(errorOf('1 in 5'), /cannot use 'in' with number on the right/)
  t.match(errorOf('1 in true'), /cannot use 'in' with boolean/)
})

t.test('not, and, or (Python truthiness; and/or return an operand)', async (t) => {
  for (const falsy of ['0', "''", '[]', 'null', 'false', 'nobody', 'data.nothing', 'empty']) {
    t.equal(value(`not ${falsy}`, scope), true, `${falsy} is false`)
  }
  for (const truthy of ['1', '-1', '0.5', "'0'", "' '", '[0]', 'true', 'data', 'Digits']) {
    t.equal(value(`not ${truthy}`, scope), false, `${truthy} is true`)
  }
  t.equal(value('not data.nested', scope), false)
  t.equal(value('not data.nested.deep.nothing', scope), true)
  t.equal(value('1 and 2'), 2)
  t.equal(value('0 and 2'), 0)
  t.equal(value("nobody or 'guest'"), 'guest')
  t.equal(value("'taro' or 'guest'"), 'taro')
  t.equal(value('true and false or true'), true)
  // Short-circuit: the right side is not evaluated, so its error does not happen.
  t.equal(value('false and 1 / 0'), false)
  t.equal(value('true or 1 / 0'), true)
  t.match(errorOf('true and 1 / 0'), /division by zero/)
})

t.test('str, int, float, len', async (t) => {
  t.equal(value('str(1)'), '1')
  t.equal(value('str(2.5)'), '2.5')
  t.equal(value('str(-0)'), '0')
  t.equal(value('str(null)'), '')
  t.equal(value('str(true)'), 'true')
  t.equal(value('str(false)'), 'false')
  t.equal(value("str('x')"), 'x')
  t.equal(value("str([1, 'a'])"), '[1,"a"]')
  t.equal(value('str(data.nested)', scope), '{"deep":{"x":1}}')
  t.equal(value("str(1) + '0'"), '10')
  t.equal(value("int('42')"), 42)
  t.equal(value("int(' -7 ')"), -7)
  t.equal(value("int('+3')"), 3)
  t.equal(value("int('007')"), 7)
  t.equal(value('int(3.9)'), 3)
  t.equal(value('int(-3.9)'), -3)
  t.ok(Object.is(value('int(-0.5)'), 0))
  t.equal(value('int(true)'), 1)
  t.equal(value('int(Digits) + 1', scope), 3)
  t.match(errorOf("int('3.5')"), /int\(\) cannot convert '3.5'/)
  t.match(errorOf("int('')"), /int\(\) cannot convert ''/)
  t.match(errorOf("int('abc')"), /cannot convert 'abc'/)
  t.match(errorOf('int(null)'), /int\(\) cannot convert null/)
  t.match(errorOf('int([1])'), /cannot convert list/)
  t.match(errorOf(`int('${'9'.repeat(400)}')`), /not a finite number/)
  t.equal(value("float('3.5')"), 3.5)
  t.equal(value("float('.5')"), 0.5)
  t.equal(value("float('1e3')"), 1000)
  t.equal(value("float(' 2 ')"), 2)
  t.equal(value('float(2)'), 2)
  t.equal(value('float(false)'), 0)
  t.match(errorOf("float('1,5')"), /float\(\) cannot convert '1,5'/)
  t.match(errorOf("float('Infinity')"), /cannot convert/)
  t.match(errorOf("float('NaN')"), /cannot convert/)
  t.match(errorOf("float('1e999')"), /not a finite number/)
  t.match(errorOf('float(null)'), /cannot convert null/)
  t.equal(value("len('abc')"), 3)
  t.equal(value("len('日本語🎌')"), 4) // code points, not UTF-16 units
  t.equal(value("len('')"), 0)
  t.equal(value('len(data.items)', scope), 3)
  t.equal(value('len(data)', scope), 5)
  t.equal(value('len([])'), 0)
  t.match(errorOf('len(1)'), /len\(\) of number/)
  t.match(errorOf('len(null)'), /len\(\) of null/)
  t.match(errorOf('len(true)'), /len\(\) of boolean/)
})

t.test('deeply nested data fails as an error value, not a crash', async (t) => {
  const nest = (): Value => {
    let deep: Value = 1
    for (let i = 0; i < 200000; i++) deep = [deep]
    return deep
  }
  const vars = new Map<string, Value>([['a', nest()], ['b', nest()]])
  t.match(run('a == b', vars), { ok: false, error: /could not be evaluated/ })
  t.match(run('str(a)', vars), { ok: false, error: /could not be evaluated/ })
})
