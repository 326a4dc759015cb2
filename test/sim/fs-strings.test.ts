/**
 * The simulator reads dial strings with ports of FreeSWITCH's own splitters (switch_utils.c
 * switch_separate_string / cleanup_separated_string, switch_event.c switch_event_create_brackets,
 * switch_ivr_originate.c), so the daemon's escaping is checked against the real rules.
 */
import t from 'tap'
import { cleanupSeparatedString, createBrackets, separateString, urlEncode, type VarList } from '../../src/sim/text/fs-strings.js'
import { parseDialString } from '../../src/sim/text/dialstring.js'
import { expandVariables } from '../../src/sim/text/expand.js'

t.test('switch_separate_string on blanks: quotes group, are stripped, escapes resolve', async (t) => {
  t.same(separateString("a  'b c'   d", ' '), ['a', 'b c', 'd'])
  t.same(separateString('{x=1,y=2}user/a@b &park()', ' '), ['{x=1,y=2}user/a@b', '&park()'])
  t.same(separateString("{n='Foo Bar'}sofia/x 1002 XML ctx", ' '), ['{n=Foo Bar}sofia/x', '1002', 'XML', 'ctx'])
  t.same(separateString('a\\sb c', ' '), ['a b', 'c'], '\\s is a space')
  t.same(separateString('a b c d', ' ', 2), ['a', 'b c d'], 'the last slot takes the rest unsplit')
  t.same(separateString('a ', ' '), ['a'], 'a trailing blank makes no empty element')
})

t.test('switch_separate_string on a character: empty parts kept, quotes protect, ^^ changes the delimiter', async (t) => {
  t.same(separateString('a,,b', ','), ['a', '', 'b'])
  t.same(separateString('a,', ','), ['a'])
  t.same(separateString("k='x,y',z", ','), ['k=x,y', 'z'])
  t.same(separateString('^^:a=1:b=2', ','), ['a=1', 'b=2'])
  t.same(separateString('a\\,b,c', ','), ['a,b', 'c'], 'an escaped delimiter stays in the part')
  t.same(separateString('k=v=w', '=', 2), ['k', 'v=w'], 'split on the first = only')
})

t.test('cleanup_separated_string: a lone quote is kept', async (t) => {
  t.equal(cleanupSeparatedString("it's", null), "it's")
  t.equal(cleanupSeparatedString("  'a b'  ", null), 'a b')
})

t.test('switch_event_create_brackets reads one group and returns the rest', async (t) => {
  const vars: VarList = []
  t.equal(createBrackets('{a=1,b=x=y}rest', '{', '}', ',', vars), 'rest')
  t.same(vars, [
    ['a', '1'],
    ['b', 'x=y'],
  ])
  t.equal(createBrackets('{a=1', '{', '}', ',', []), undefined, 'unclosed: parse error')
  const v2: VarList = []
  createBrackets('{^^:sip_invite_domain=d:presence_id=u@d}x', '{', '}', ',', v2)
  t.same(v2, [
    ['sip_invite_domain', 'd'],
    ['presence_id', 'u@d'],
  ])
})

t.test('originate dial string: globals, per-leg vars, simultaneous and failover legs', async (t) => {
  const d = parseDialString('{originate_timeout=20,r=1}[origination_uuid=A,sip_h_Call-Info=<sip:h>;answer-after=0]user/a@d,[origination_uuid=B]user/b@d|sofia/gateway/pstn/0312')
  t.ok(d)
  t.same(d?.globals, [
    ['originate_timeout', '20'],
    ['r', '1'],
  ])
  t.equal(d?.groups.length, 2)
  t.same(d?.groups[0]?.[0], {
    vars: [
      ['origination_uuid', 'A'],
      ['sip_h_Call-Info', '<sip:h>;answer-after=0'],
    ],
    endpoint: 'user/a@d',
  })
  t.same(d?.groups[0]?.[1]?.endpoint, 'user/b@d')
  t.same(d?.groups[1]?.[0], { vars: [], endpoint: 'sofia/gateway/pstn/0312' })
  t.same(parseDialString('[a=1,b=2]x')?.groups[0]?.[0]?.vars, [
    ['a', '1'],
    ['b', '2'],
  ], 'a comma inside [] does not split the leg')
  t.same(parseDialString('{a=1}{b=2}x')?.globals, [
    ['a', '1'],
    ['b', '2'],
  ], 'several {} groups')
  t.equal(parseDialString('{a=1'), undefined, 'unclosed {')
  t.equal(parseDialString('{a=1}'), undefined, 'no endpoint')
})

t.test('switch_url_encode: the unsafe set escaped, commas raw, existing %XX kept', async (t) => {
  t.equal(urlEncode('Sun, 22 Nov 2026 06:08:06 GMT'), 'Sun,%2022%20Nov%202026%2006%3A08%3A06%20GMT')
  t.equal(urlEncode('fd00::2'), 'fd00%3A%3A2')
  t.equal(urlEncode('a@b{c}[d]=&'), 'a%40b%7Bc%7D%5Bd%5D%3D%26')
  t.equal(urlEncode('100%25'), '100%25')
  t.equal(urlEncode('é'), '%C3%A9')
})

t.test('${} expansion: variables, nested, api calls, unknown is empty', async (t) => {
  const vars: Record<string, string> = { dialed_user: 'alice', dialed_domain: 'example.test' }
  const calls: string[] = []
  const ctx = {
    variable: (n: string) => vars[n],
    global: (n: string) => (n === 'domain' ? 'g.test' : undefined),
    api: (c: string, a: string) => {
      calls.push(`${c} ${a}`)
      return 'sofia/internal/sip:alice@127.0.0.1:5070'
    },
  }
  t.equal(expandVariables('${sofia_contact(*/${dialed_user}@${dialed_domain})}', ctx), 'sofia/internal/sip:alice@127.0.0.1:5070')
  t.same(calls, ['sofia_contact */alice@example.test'])
  t.equal(expandVariables('x=${nope}|$${domain}', ctx), 'x=|g.test')
})
