import t from 'tap'
import * as c from '../../src/pbx/commands.js'
import type { OriginateSpec } from '../../src/pbx/commands.js'
import { parseOriginate } from './fs-model.js'

const A = '11111111-1111-4111-8111-111111111111'
const B = '22222222-2222-4222-8222-222222222222'
const CONTACT_A = 'sofia/internal/sip:1001@127.0.0.1:5071'
const CONTACT_B = 'sofia/internal/sip:1001@127.0.0.1:5081;transport=udp'

const base = (over: Partial<OriginateSpec> = {}): OriginateSpec => ({
  legs: [
    { uuid: A, endpoint: { kind: 'contact', contact: CONTACT_A }, vars: { cod_user_id: '1' } },
    { uuid: B, endpoint: { kind: 'contact', contact: CONTACT_B }, vars: { cod_user_id: '1' } },
  ],
  vars: { cod_request_id: 'req-1', cod_domain: 'example.test' },
  timeoutSec: 30,
  target: { kind: 'dialplan', extension: 'cod_route', context: 'example.test' },
  ...over,
})

const build = (spec: OriginateSpec): string => {
  const r = c.originate(spec)
  if (!r.ok) throw new Error(`${r.error.field}: ${r.error.reason}`)
  return r.value
}

/** The structure FreeSWITCH would read, free of the caller id name. */
const shape = (cmd: string) => {
  const p = parseOriginate(cmd)
  const globals = new Map(p.globals)
  globals.delete('origination_caller_id_name')
  return {
    args: p.args.slice(1),
    globals: [...globals.entries()],
    groups: p.groups.map((g) => g.map((l) => ({ vars: [...l.vars.entries()], endpoint: l.endpoint }))),
    enterprise: p.enterprise,
    nestedVars: p.nestedVars,
  }
}

t.test('originate: every leg its own origination_uuid, rung together, dialplan target', async (t) => {
  const cmd = build(base({ callerIdName: 'Alice', callerIdNumber: '0501230000' }))
  t.equal(
    cmd,
    `originate {originate_timeout=30,ignore_early_media=true,origination_caller_id_name=Alice,origination_caller_id_number=0501230000,cod_request_id=req-1,cod_domain=example.test}` +
      `[origination_uuid=${A},cod_user_id=1]${CONTACT_A},[origination_uuid=${B},cod_user_id=1]${CONTACT_B} cod_route XML example.test`,
  )
  const p = parseOriginate(cmd)
  t.same(p.args.slice(1), ['cod_route', 'XML', 'example.test'])
  t.equal(p.groups.length, 1)
  t.same(
    p.groups[0]?.map((l) => [l.vars.get('origination_uuid'), l.endpoint]),
    [
      [A, CONTACT_A],
      [B, CONTACT_B],
    ],
  )
  t.equal(p.globals.get('origination_caller_id_name'), 'Alice')
})

t.test('originate: park target, gateway and user endpoints', async (t) => {
  const cmd = build(
    base({
      legs: [
        { uuid: A, endpoint: { kind: 'gateway', gateway: 'pstn', number: '+81312345678' } },
        { uuid: B, endpoint: { kind: 'user', user: 'alice', domain: 'example.test' } },
      ],
      target: { kind: 'park' },
    }),
  )
  t.match(cmd, /\[origination_uuid=1{8}[^\]]*\]sofia\/gateway\/pstn\/\+81312345678,/)
  t.match(cmd, /user\/alice@example\.test &park\(\)$/)
})

t.test('originate: auto-answer headers on the leg that asks for them only', async (t) => {
  const cmd = build(base({ legs: [{ uuid: A, endpoint: { kind: 'contact', contact: CONTACT_A }, autoAnswer: { host: 'example.test' } }, { uuid: B, endpoint: { kind: 'contact', contact: CONTACT_B } }] }))
  const p = parseOriginate(cmd)
  const [a, b] = p.groups[0] ?? []
  t.equal(a?.vars.get('sip_h_Call-Info'), '<sip:example.test>;answer-after=0')
  t.equal(a?.vars.get('sip_h_Alert-Info'), '<sip:example.test>;info=alert-autoanswer;delay=0')
  t.equal(b?.vars.has('sip_h_Call-Info'), false)
})

t.test('caller id name: spaces quoted, the quotes vanish when FreeSWITCH reads it', async (t) => {
  const cmd = build(base({ callerIdName: 'Alice Smith (Sales)' }))
  t.match(cmd, /origination_caller_id_name='Alice Smith \(Sales\)'/)
  t.equal(parseOriginate(cmd).globals.get('origination_caller_id_name'), 'Alice Smith (Sales)')
})

const ATTACKS = [
  "x\napi hupall NORMAL_CLEARING",
  'x\r\napi system rm -rf /',
  'x\u0000api status',
  'x,[origination_uuid=33333333-3333-4333-8333-333333333333]sofia/gateway/pstn/0900',
  'x|sofia/gateway/pstn/0900',
  'x}sofia/gateway/pstn/0900 &park()',
  'x]sofia/gateway/pstn/0900',
  '{origination_nested_vars=true}',
  'origination_nested_vars=true',
  '[cod_domain=other.test]',
  '<cod_domain=other.test>',
  '^^:a=b:c=d',
  "'",
  "a' 9999 XML other.test '",
  '\\',
  '\\s\\n\\',
  '${system(touch /tmp/pwned)}',
  '$${hostname}',
  '${api(uuid_kill all)}',
  'a:_:sofia/gateway/pstn/0900',
  'a=b,cod_domain=other.test',
  ' 1234 XML other.test',
  '\t\x7f\x1b[31m',
  'Ünïcödé 名前',
]

t.test('caller id name: hostile text can neither add a leg, a variable, an argument, nor an expansion', async (t) => {
  const reference = shape(build(base({ callerIdName: 'Alice' })))
  for (const attack of ATTACKS) {
    const r = c.originate(base({ callerIdName: attack }))
    if (!r.ok) {
      t.fail(`refused ${JSON.stringify(attack)}: ${r.error.reason}`)
      continue
    }
    const cmd: string = r.value
    t.notMatch(cmd, /[\r\n\0]/, `single line for ${JSON.stringify(attack)}`)
    t.notOk(cmd.includes('$'), `no $ for ${JSON.stringify(attack)}`)
    t.same(shape(cmd), reference, `structure unchanged for ${JSON.stringify(attack)}`)
    const name = parseOriginate(cmd).globals.get('origination_caller_id_name') ?? ''
    t.match(name, /^[A-Za-z0-9 .+\-_@#*/!?%&()]*$/, `name in the safe alphabet for ${JSON.stringify(attack)}`)
  }
})

t.test('neutraliseCallerName keeps ordinary names and blanks the rest', async (t) => {
  t.equal(c.neutraliseCallerName('Alice'), 'Alice')
  t.equal(c.neutraliseCallerName("O'Brien, Pat"), 'O Brien Pat')
  t.equal(c.neutraliseCallerName('${x}'), 'x')
  t.equal(c.neutraliseCallerName('a'.repeat(100)).length, 64)
  t.equal(c.neutraliseCallerName(' \n\t '), '')
  // An empty name is left out rather than written as an empty variable.
  t.notMatch(build(base({ callerIdName: '{}' })), /origination_caller_id_name/)
})

t.test('every validated value refuses injection', async (t) => {
  const bad = (label: string, r: { ok: boolean }) => t.equal(r.ok, false, label)
  const legWith = (over: object) => base({ legs: [{ uuid: A, endpoint: { kind: 'contact', contact: CONTACT_A }, ...over }] })
  bad('uuid with a comma', c.originate(legWith({ uuid: `${A},x` })))
  bad('uuid with a newline', c.originate(legWith({ uuid: `${A}\napi status` })))
  bad('duplicate uuid', c.originate(base({ legs: [{ uuid: A, endpoint: { kind: 'contact', contact: CONTACT_A } }, { uuid: A.toUpperCase(), endpoint: { kind: 'contact', contact: CONTACT_B } }] })))
  bad('contact with a comma', c.originate(legWith({ endpoint: { kind: 'contact', contact: `${CONTACT_A},sofia/gateway/pstn/0900` } })))
  bad('contact with a pipe', c.originate(legWith({ endpoint: { kind: 'contact', contact: `${CONTACT_A}|sofia/gateway/pstn/0900` } })))
  bad('contact with braces', c.originate(legWith({ endpoint: { kind: 'contact', contact: `${CONTACT_A};x={a=b}` } })))
  bad('contact with :_:', c.originate(legWith({ endpoint: { kind: 'contact', contact: 'sofia/internal/sip:a:_:b@h' } })))
  bad('contact with a space', c.originate(legWith({ endpoint: { kind: 'contact', contact: `${CONTACT_A} 1 XML x` } })))
  bad('contact with ${', c.originate(legWith({ endpoint: { kind: 'contact', contact: 'sofia/internal/sip:${x}@h' } })))
  bad('contact that is not sofia', c.originate(legWith({ endpoint: { kind: 'contact', contact: 'loopback/1234' } })))
  bad('contact naming origination_nested_vars', c.originate(legWith({ endpoint: { kind: 'contact', contact: 'sofia/internal/sip:a@h;origination_nested_vars=true' } })))
  bad('gateway with a slash', c.originate(legWith({ endpoint: { kind: 'gateway', gateway: 'pstn/x', number: '0900' } })))
  bad('number with letters', c.originate(legWith({ endpoint: { kind: 'gateway', gateway: 'pstn', number: '0900,x' } })))
  bad('user with @', c.originate(legWith({ endpoint: { kind: 'user', user: 'a@b', domain: 'example.test' } })))
  bad('domain with a space', c.originate(legWith({ endpoint: { kind: 'user', user: 'a', domain: 'example.test x' } })))
  bad('variable name with =', c.originate(base({ vars: { 'a=b': '1' } })))
  bad('variable name with a comma', c.originate(base({ vars: { 'a,b': '1' } })))
  for (const v of ['a,b', 'a}b', 'a]b', 'a|b', "a'b", 'a b', 'a$b', 'a\nb', 'a\\b', 'a^b', 'a:b', 'a=b', 'a{b']) {
    bad(`variable value ${JSON.stringify(v)}`, c.originate(base({ vars: { cod_x: v } })))
    bad(`leg variable value ${JSON.stringify(v)}`, c.originate(legWith({ vars: { cod_x: v } })))
  }
  bad('reserved variable origination_uuid', c.originate(base({ vars: { origination_uuid: B } })))
  bad('reserved variable origination_nested_vars', c.originate(base({ vars: { origination_nested_vars: 'true' } })))
  bad('reserved sip header', c.originate(legWith({ vars: { 'sip_h_Call-Info': 'x' } })))
  bad('caller id number with text', c.originate(base({ callerIdNumber: '0501 XML x' })))
  bad('timeout 0', c.originate(base({ timeoutSec: 0 })))
  bad('timeout fractional', c.originate(base({ timeoutSec: 1.5 })))
  bad('no legs', c.originate(base({ legs: [] })))
  bad('target extension with a space', c.originate(base({ target: { kind: 'dialplan', extension: 'a b', context: 'example.test' } })))
  bad('target context injection', c.originate(base({ target: { kind: 'dialplan', extension: 'x', context: 'example.test\napi status' } })))
  bad('auto-answer host injection', c.originate(legWith({ autoAnswer: { host: 'x>;a=b' } })))
})

t.test('the other commands: exact text, and refusal of injection', async (t) => {
  const text = (r: { ok: true; value: string } | { ok: false }) => (r.ok ? r.value : 'REFUSED')
  t.equal(text(c.sofiaContact('alice', 'example.test')), 'sofia_contact */alice@example.test')
  t.equal(text(c.sofiaContact('alice', 'example.test', 'internal')), 'sofia_contact internal/alice@example.test')
  t.equal(text(c.uuidKill(A)), `uuid_kill ${A}`)
  t.equal(text(c.uuidKill(A, 'ORIGINATOR_CANCEL')), `uuid_kill ${A} ORIGINATOR_CANCEL`)
  t.equal(text(c.uuidBridge(A, B)), `uuid_bridge ${A} ${B}`)
  t.equal(text(c.uuidTransfer(A, 'cod_route', 'example.test')), `uuid_transfer ${A} cod_route XML example.test`)
  t.equal(text(c.uuidPark(A)), `uuid_park ${A}`)
  t.equal(text(c.uuidSetVar(A, 'cod_x', 'v1')), `uuid_setvar ${A} cod_x v1`)
  t.equal(text(c.uuidSetVar(A, 'cod_x', '')), `uuid_setvar ${A} cod_x`)
  t.equal(text(c.uuidGetVar(A, 'cod_domain')), `uuid_getvar ${A} cod_domain`)
  t.equal(text(c.hupall('ORIGINATOR_CANCEL', 'cod_request_id', 'req-1')), 'hupall ORIGINATOR_CANCEL cod_request_id req-1')
  t.equal(text(c.showChannelsJson()), 'show channels as json')
  t.equal(text(c.status()), 'status')

  const refused = (label: string, r: { ok: boolean }) => t.equal(r.ok, false, label)
  refused('sofia_contact user newline', c.sofiaContact('alice\napi status', 'example.test'))
  refused('sofia_contact domain space', c.sofiaContact('alice', 'example.test 1'))
  refused('sofia_contact profile slash', c.sofiaContact('alice', 'example.test', 'a/b'))
  refused('uuid_kill cause with space', c.uuidKill(A, 'NORMAL_CLEARING x'))
  refused('uuid_kill cause lower case', c.uuidKill(A, 'normal'))
  refused('uuid_kill bad uuid', c.uuidKill('all'))
  refused('uuid_bridge bad uuid', c.uuidBridge(A, `${B} x`))
  refused('uuid_transfer context injection', c.uuidTransfer(A, '1002', 'default\n\napi status'))
  refused('uuid_transfer extension with quote', c.uuidTransfer(A, "1002'", 'default'))
  refused('uuid_setvar value with space', c.uuidSetVar(A, 'cod_x', 'a b'))
  refused('uuid_setvar value with ${', c.uuidSetVar(A, 'cod_x', '${x}'))
  refused('uuid_setvar origination_nested_vars', c.uuidSetVar(A, 'origination_nested_vars', 'true'))
  refused('uuid_getvar name with space', c.uuidGetVar(A, 'a b'))
  refused('hupall empty value (would hang up everything)', c.hupall('NORMAL_CLEARING', 'cod_request_id', ''))
  refused('hupall value with space', c.hupall('NORMAL_CLEARING', 'cod_request_id', 'a b'))
  refused('hupall var injection', c.hupall('NORMAL_CLEARING', 'cod_request_id x', 'a'))
})

t.test('uuid_record: the exact text, and no path but an absolute .wav of the recording alphabet', async (t) => {
  const P = '/var/lib/cod/recordings/example.test/0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d.wav'
  const text = (r: { ok: true; value: string } | { ok: false }) => (r.ok ? r.value : 'REFUSED')
  t.equal(text(c.uuidRecord(A, 'start', P)), `uuid_record ${A} start ${P}`)
  t.equal(text(c.uuidRecord(A, 'stop', P)), `uuid_record ${A} stop ${P}`)
  const refused = (label: string, r: { ok: boolean }) => t.equal(r.ok, false, label)
  refused('bad uuid', c.uuidRecord(`${A} x`, 'start', P))
  refused('uuid all', c.uuidRecord('all', 'stop', P))
  refused('action mask', c.uuidRecord(A, 'mask' as 'start', P))
  refused('relative path', c.uuidRecord(A, 'start', 'rec/a.wav'))
  refused('dot-dot segment', c.uuidRecord(A, 'start', '/var/lib/cod/../../etc/x.wav'))
  refused('dot segment', c.uuidRecord(A, 'start', '/var/./x.wav'))
  refused('empty segment', c.uuidRecord(A, 'start', '/var//x.wav'))
  refused('space (a second argument)', c.uuidRecord(A, 'start', '/tmp/a.wav 10'))
  refused('newline (a second command)', c.uuidRecord(A, 'start', '/tmp/a.wav\n\napi status'))
  refused('variable expansion', c.uuidRecord(A, 'start', '/tmp/${x}.wav'))
  refused('not a wav', c.uuidRecord(A, 'start', '/tmp/a.mp3'))
  refused('all (stops every recording)', c.uuidRecord(A, 'stop', 'all'))
  refused('a stream URL', c.uuidRecord(A, 'start', 'shout://x/a.wav'))
})

t.test('app(): name and argument for sendmsg execute', async (t) => {
  const a = c.app('playback', 'ivr/welcome.wav')
  t.same(a.ok ? { app: a.value.app, arg: a.value.arg } : null, { app: 'playback', arg: 'ivr/welcome.wav' })
  t.equal(c.app('park').ok, true)
  for (const arg of ['${system(id)}', 'a\nb', 'a\rb', 'a\0b', '$${x}', 'x'.repeat(5000)]) {
    t.equal(c.app('playback', arg).ok, false, `arg ${JSON.stringify(arg.slice(0, 20))}`)
  }
  for (const name of ['play back', 'Playback', 'playback\n', 'a;b', '']) t.equal(c.app(name).ok, false, `name ${JSON.stringify(name)}`)
})

t.test('end_user travels as percent-encoded JSON and comes back intact', async (t) => {
  const endUser = {
    id: 'u-1',
    name: "O'Brien, ${system(id)} {x=y} [a] |b| ^^:c",
    organization: '株式会社 テスト\r\napi status',
    avatar: 'https://example.test/a.png?x=1&y=2',
    prefecture: '東京都',
  }
  const encoded = c.encodeEndUser(endUser)
  t.match(encoded, c.PATTERNS.token, 'always in the token alphabet')
  const r = c.decodeEndUser(encoded)
  t.same(r.ok ? r.value : null, endUser)
  // As a variable it cannot alter the command either.
  const cmd = build(base({ vars: { cod_request_id: 'req-1', cod_domain: 'example.test', cod_end_user: encoded } }))
  t.equal(parseOriginate(cmd).globals.get('cod_end_user'), encoded)
  const dropped = c.decodeEndUser(encodeURIComponent(JSON.stringify({ name: 1, x: 'y', id: 'k' })))
  t.same(dropped.ok ? dropped.value : null, { id: 'k' }, 'unknown keys and non-strings dropped')
  t.equal(c.decodeEndUser('%E0%A4%A').ok, false, 'broken encoding')
  t.equal(c.decodeEndUser('%5B1%5D').ok, false, 'not an object')
})
