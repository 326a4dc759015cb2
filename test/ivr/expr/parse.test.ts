import t from 'tap'
import {
  MAX_EXPRESSION_LENGTH,
  MAX_EXPRESSION_NESTING,
  parseExpression,
} from '../../../src/ivr/expr/index.js'

const parses = (src: string) => parseExpression(src).ok
const errorOf = (src: string): string => {
  const r = parseExpression(src)
  return r.ok ? 'no error' : r.error
}

t.test('literals, names, lists, members, index, calls', async (t) => {
  t.same(parseExpression('42'), { ok: true, value: { kind: 'literal', value: 42 } })
  t.same(parseExpression('2.5'), { ok: true, value: { kind: 'literal', value: 2.5 } })
  t.same(parseExpression("'a\\'b\\\\c'"), { ok: true, value: { kind: 'literal', value: "a'b\\c" } })
  t.same(parseExpression('true'), { ok: true, value: { kind: 'literal', value: true } })
  t.same(parseExpression('false'), { ok: true, value: { kind: 'literal', value: false } })
  t.same(parseExpression('null'), { ok: true, value: { kind: 'literal', value: null } })
  t.same(parseExpression('data.balance'), {
    ok: true,
    value: { kind: 'member', object: { kind: 'name', name: 'data' }, name: 'balance' },
  })
  t.same(parseExpression("['a', 'b',]"), {
    ok: true,
    value: { kind: 'list', items: [{ kind: 'literal', value: 'a' }, { kind: 'literal', value: 'b' }] },
  })
  t.same(parseExpression('[]'), { ok: true, value: { kind: 'list', items: [] } })
  t.same(parseExpression('x[0]'), {
    ok: true,
    value: { kind: 'index', object: { kind: 'name', name: 'x' }, index: { kind: 'literal', value: 0 } },
  })
  t.same(parseExpression('len(x)'), { ok: true, value: { kind: 'call', fn: 'len', args: [{ kind: 'name', name: 'x' }] } })
  t.same(parseExpression('hour()'), { ok: true, value: { kind: 'call', fn: 'hour', args: [] } })
  // A reserved word is a fine member name: data.in is the key "in" of data.
  t.ok(parses('data.in'))
})

t.test('precedence follows Python', async (t) => {
  const tree = (src: string) => {
    const r = parseExpression(src)
    return r.ok ? r.value : r.error
  }
  t.same(tree('1 + 2 * 3'), tree('1 + (2 * 3)'))
  t.same(tree('-2 ** 2'), tree('-(2 ** 2)'))
  t.same(tree('2 ** 3 ** 2'), tree('2 ** (3 ** 2)'))
  t.same(tree('2 ** -1'), tree('2 ** (-1)'))
  t.same(tree('a or b and c'), tree('a or (b and c)'))
  t.same(tree('not a == b'), tree('not (a == b)'))
  t.same(tree('a + 1 GT b * 2'), tree('(a + 1) GT (b * 2)'))
  t.same(tree('a - b - c'), tree('(a - b) - c'))
  t.same(tree('a.b.c'), tree('(a.b).c'))
  t.same(tree('x not in y'), { kind: 'compare', op: 'not in', left: { kind: 'name', name: 'x' }, right: { kind: 'name', name: 'y' } })
  t.same(tree('a GT b'), tree('a > b'))
  t.same(tree('a GE b'), tree('a >= b'))
  t.same(tree('a LT b'), tree('a < b'))
  t.same(tree('a LE b'), tree('a <= b'))
})

t.test('syntax errors are reported with a column', async (t) => {
  t.match(errorOf(''), /empty expression/)
  t.match(errorOf('   '), /empty expression/)
  t.match(errorOf('1 +'), /expected a value at column 4/)
  t.match(errorOf('(1 + 2'), /expected \)/)
  t.match(errorOf('[1, 2'), /expected , or \]/)
  t.match(errorOf('x[1'), /expected \]/)
  t.match(errorOf('1 2'), /expected the end of the expression at column 3/)
  t.match(errorOf("'abc"), /unterminated string starting at column 1/)
  t.match(errorOf("'a\\nb'"), /unknown escape \\n/)
  t.match(errorOf('"abc"'), /single quotes/)
  t.match(errorOf('a = 1'), /compare with ==/)
  t.match(errorOf('a && b'), /use and, or, not/)
  t.match(errorOf('!a'), /use and, or, not/)
  t.match(errorOf('a # b'), /unexpected character "#"/)
  t.match(errorOf('1.'), /expected a member name/)
  t.match(errorOf('3abc'), /bad number/)
  t.match(errorOf('a.'), /expected a member name after \./)
  t.match(errorOf('a.1'), /expected a member name/)
  t.match(errorOf('and'), /expected a value/)
  t.match(errorOf('in'), /expected a value/)
  t.match(errorOf('GT'), /expected a value/)
  t.match(errorOf('1 GT 2 GT 3'), /cannot be chained/)
  t.match(errorOf('a == b == c'), /cannot be chained/)
  t.match(errorOf('a in b in c'), /cannot be chained/)
})

t.test('word operators are case-sensitive, with a hint', async (t) => {
  t.match(errorOf('a gt b'), /case-sensitive: write GT/)
  t.match(errorOf('a Ge b'), /case-sensitive: write GE/)
  t.match(errorOf('a AND b'), /case-sensitive: write and/)
  t.match(errorOf('a Or b'), /case-sensitive: write or/)
  t.match(errorOf('x IN y'), /case-sensitive: write in/)
  // Wrong-case words are ordinary names where a value is expected.
  t.ok(parses('gt'))
  t.ok(parses('AND + 1'))
})

t.test('only the built-in functions can be called, with the right arity', async (t) => {
  t.match(errorOf('foo(1)'), /unknown function foo\(\)/)
  t.match(errorOf('eval(1)'), /unknown function eval\(\)/)
  t.match(errorOf('Function(1)'), /unknown function/)
  t.match(errorOf("constructor.constructor('return process')()"), /only the functions .* can be called/)
  t.match(errorOf("x.toString()"), /only the functions/)
  t.match(errorOf("(str)(1)"), /only the functions/)
  t.match(errorOf('str()'), /str\(\) takes 1 argument, got 0/)
  t.match(errorOf('int(1, 2)'), /int\(\) takes 1 argument, got 2/)
  t.match(errorOf('hour(1)'), /hour\(\) takes 0 arguments, got 1/)
  t.match(errorOf('len(1'), /expected \) to close len\(/)
  for (const f of ['str(1)', 'int(1)', 'float(1)', 'len(1)', 'hour()', 'minute()', 'weekday()', 'date()']) {
    t.ok(parses(f), f)
  }
})

t.test('limits on length and nesting', async (t) => {
  t.ok(parses('1' + ' + 1'.repeat(200)))
  t.match(errorOf('1'.repeat(MAX_EXPRESSION_LENGTH + 1)), /longer than 1024 characters/)
  t.ok(parses('1'.padStart(MAX_EXPRESSION_LENGTH, ' ')))
  const nest = (n: number) => '('.repeat(n) + '1' + ')'.repeat(n)
  t.ok(parses(nest(MAX_EXPRESSION_NESTING)))
  t.ok(parses('['.repeat(MAX_EXPRESSION_NESTING) + ']'.repeat(MAX_EXPRESSION_NESTING)))
  t.match(errorOf(nest(MAX_EXPRESSION_NESTING + 1)), /nested deeper than 32/)
  t.match(errorOf('['.repeat(40) + ']'.repeat(40)), /nested deeper/)
  t.match(errorOf('not '.repeat(40) + 'x'), /nested deeper/)
  t.match(errorOf('-'.repeat(40) + '1'), /nested deeper/)
  t.match(errorOf('2' + ' ** 2'.repeat(40)), /nested deeper/)
  t.match(errorOf('len('.repeat(40) + 'x' + ')'.repeat(40)), /nested deeper/)
})
