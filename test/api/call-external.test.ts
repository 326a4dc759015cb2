/**
 * call_external: the PSTN target (string, end_user prefix, object form), internal-only
 * destinations, and the xml_url: forms (privilege, URL lists, inline base64 IVR documents).
 */
import t from 'tap'
import { AUTH_B, operation, startApp } from './helpers.js'

const h = await startApp()
t.teardown(() => h.close())
const { good, bad } = operation(h, 'call_external')

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64')
const inline = (xml: string | Buffer) => `xml_url:inline_xml://${b64(xml)}`
const IVR = '<?xml version="1.0" encoding="UTF-8"?>\n<IVR><Speak>Hello</Speak><Hangup/></IVR>'

t.test('a minimal call and its plan', async (t) => {
  const plan = await good(t, { target: '0311112222', destination: 'alice' })
  t.same(plan?.originator, { kind: 'pstn', number: '0311112222' })
  t.match(plan, { operation: 'call_external', destination: { kind: 'user', user: { id: '1' } }, answerTimeoutSec: 180 })
  t.notOk(plan && 'endUser' in plan)
  t.equal((await good(t, { target: '0311112222', destination: 'alice', answer_timeout: 20 }))?.answerTimeoutSec, 20)
  t.equal((await good(t, { target: '0311112222', destination: 'alice', callback_url: 'https://cb.example/r' }))?.callbackUrl, 'https://cb.example/r')
})

t.test('internal destinations only', async (t) => {
  for (const [destination, kind] of [
    ['alice', 'user'],
    ['1001', 'user'],
    ['0501231001', 'user'],
    ['sales', 'group'],
    ['2002', 'group'],
    ['3001', 'extension'],
  ] as const) {
    t.equal((await good(t, { target: '0311112222', destination }))?.destination.kind, kind, destination)
  }
  await bad(t, { target: '0311112222', destination: '0311113333' }, 400, 'destination_not_allowed', 'destination')
  await bad(t, { target: '0311112222', destination: '{name=x}0311113333' }, 400, 'destination_not_allowed')
  await bad(t, { target: '0311112222', destination: { called_number: '0311113333' } }, 400, 'invalid_parameter', 'destination')
  await bad(t, { target: '0311112222', destination: 'nowhere' }, 404, 'destination_not_found')
  await bad(t, { target: '0311112222' }, 400, 'missing_parameter', 'destination')
})

t.test('target: PSTN numbers only', async (t) => {
  for (const target of ['0311112222', '+81311112222', '12', '*67#0311112222', `+${'9'.repeat(31)}`]) {
    t.same((await good(t, { target, destination: 'alice' }))?.originator, { kind: 'pstn', number: target })
  }
  await bad(t, { destination: 'alice' }, 400, 'missing_parameter', 'target')
  for (const target of ['alice', '1', `+${'9'.repeat(32)}`, '9'.repeat(33), '03-1111-2222', '03 1111 2222', '0311112222 ', '++81311112222', '81+311', 'abc123', '', 311112222, null, ['0311112222']]) {
    await bad(t, { target, destination: 'alice' }, 400, 'invalid_parameter', 'target')
  }
})

t.test('target object form', async (t) => {
  const plan = await good(t, {
    target: { called_number: '0311112222', calling_number: '0501230000', end_user: { id: 'c-42', name: 'Jane Doe', organization: 'ACME', avatar: 'https://img.example/j.png', prefecture: 'Tokyo' } },
    destination: 'sales',
  })
  const endUser = { id: 'c-42', name: 'Jane Doe', organization: 'ACME', avatar: 'https://img.example/j.png', prefecture: 'Tokyo' }
  t.same(plan?.originator, { kind: 'pstn', number: '0311112222', callingNumber: '0501230000', endUser })
  t.same(plan?.endUser, endUser, 'the end_user of the target is the plan end_user')
  t.same((await good(t, { target: { called_number: '0311112222' }, destination: 'sales' }))?.originator, { kind: 'pstn', number: '0311112222' })
  // Free text in end_user is allowed (it is escaped where it is written), control characters are not.
  t.same((await good(t, { target: { called_number: '0311112222', end_user: { name: "O'Brien, {Jr} [x] | ^ <b>]]>" } }, destination: 'sales' }))?.endUser, {
    name: "O'Brien, {Jr} [x] | ^ <b>]]>",
  })
  t.same((await good(t, { target: { called_number: '0311112222', end_user: { name: '山田 太郎' } }, destination: 'sales' }))?.endUser, { name: '山田 太郎' })
  await good(t, { target: { called_number: '0311112222', end_user: { name: 'n'.repeat(256), avatar: `https://img.example/${'a'.repeat(2048 - 20)}` } }, destination: 'sales' })

  const cases: Array<[unknown, string, string]> = [
    [{}, 'missing_parameter', 'target.called_number'],
    [{ calling_number: '0501230000' }, 'missing_parameter', 'target.called_number'],
    [{ called_number: 311112222 }, 'invalid_parameter', 'target.called_number'],
    [{ called_number: 'alice' }, 'invalid_parameter', 'target.called_number'],
    [{ called_number: '0311112222', extra: 1 }, 'invalid_parameter', 'target.extra'],
    [{ called_number: '0311112222', calling_number: '0399999999' }, 'invalid_parameter', 'target.calling_number'],
    [{ called_number: '0311112222', calling_number: 'abc' }, 'invalid_parameter', 'target.calling_number'],
    [{ called_number: '0311112222', calling_number: '0501230000\n' }, 'invalid_parameter', 'target.calling_number'],
    [{ called_number: '0311112222', end_user: 'Jane' }, 'invalid_parameter', 'target.end_user'],
    [{ called_number: '0311112222', end_user: {} }, 'invalid_parameter', 'target.end_user'],
    [{ called_number: '0311112222', end_user: { nickname: 'J' } }, 'invalid_parameter', 'target.end_user.nickname'],
    [{ called_number: '0311112222', end_user: { name: 42 } }, 'invalid_parameter', 'target.end_user.name'],
    [{ called_number: '0311112222', end_user: { name: '' } }, 'invalid_parameter', 'target.end_user.name'],
    [{ called_number: '0311112222', end_user: { name: 'n'.repeat(257) } }, 'invalid_parameter', 'target.end_user.name'],
    [{ called_number: '0311112222', end_user: { organization: 'o'.repeat(257) } }, 'invalid_parameter', 'target.end_user.organization'],
    [{ called_number: '0311112222', end_user: { avatar: 'a'.repeat(2049) } }, 'invalid_parameter', 'target.end_user.avatar'],
    [{ called_number: '0311112222', end_user: { name: 'Jane\nDoe' } }, 'invalid_parameter', 'target.end_user.name'],
    [{ called_number: '0311112222', end_user: { id: 'x\u0000' } }, 'invalid_parameter', 'target.end_user.id'],
    [{ called_number: '0311112222', end_user: { prefecture: 'x\u0085' } }, 'invalid_parameter', 'target.end_user.prefecture'],
  ]
  for (const [target, id, mentions] of cases) await bad(t, { target, destination: 'sales' }, 400, id, mentions)
})

t.test('target end_user prefix', async (t) => {
  const plan = await good(t, { target: '{name=Jane%20Doe,organization=ACME%2C%20Inc.,prefecture=Tokyo}0311112222', destination: 'alice' })
  t.same(plan?.originator, { kind: 'pstn', number: '0311112222', endUser: { name: 'Jane Doe', organization: 'ACME, Inc.', prefecture: 'Tokyo' } })
  t.same(plan?.endUser, { name: 'Jane Doe', organization: 'ACME, Inc.', prefecture: 'Tokyo' })
  t.same((await good(t, { target: '{id=a%7Db%3Dc,avatar=https://img.example/x.png}+81311112222', destination: 'alice' }))?.endUser, {
    id: 'a}b=c',
    avatar: 'https://img.example/x.png',
  })
  t.same((await good(t, { target: '{name=%E5%B1%B1%E7%94%B0}0311112222', destination: 'alice' }))?.endUser, { name: '山田' })
  for (const target of [
    '{}0311112222',
    '{name=Jane0311112222',
    '{nickname=J}0311112222',
    '{Name=J}0311112222',
    '{name}0311112222',
    '{=J}0311112222',
    '{name=}0311112222',
    '{name=a=b}0311112222',
    '{name=a,b}0311112222',
    '{name=a,,org=b}0311112222',
    '{name=a,name=b}0311112222',
    '{name=%E0%A4%A}0311112222',
    '{name=%zz}0311112222',
    '{name=%0Aevil}0311112222',
    `{name=${'n'.repeat(257)}}0311112222`,
    '{name=Jane}alice',
    '{name=Jane}',
    '{name=Jane}03 1111 2222',
    '{name=Jane}0311112222\n',
  ]) {
    await bad(t, { target, destination: 'alice' }, 400, 'invalid_parameter', 'target')
  }
})

t.test('xml_url: http/https URLs, comma list = fallbacks', async (t) => {
  t.same((await good(t, { target: '0311112222', destination: 'xml_url:https://ivr.example/menu?x=1' }))?.destination, {
    kind: 'ivr',
    source: { kind: 'url', urls: ['https://ivr.example/menu?x=1'] },
  })
  t.same((await good(t, { target: '0311112222', destination: 'xml_url:https://a.example/m,http://b.example:8080/m' }))?.destination, {
    kind: 'ivr',
    source: { kind: 'url', urls: ['https://a.example/m', 'http://b.example:8080/m'] },
  })
  for (const destination of [
    'xml_url:',
    'xml_url:ivr.example/menu',
    'xml_url:ftp://ivr.example/menu',
    'xml_url:file:///etc/passwd',
    'xml_url:https://a.example/m,ftp://b.example/m',
    'xml_url:https://a.example/m,',
    'xml_url:https://a.example/m b',
    `xml_url:https://a.example/${'a'.repeat(2048)}`,
    `xml_url:${Array.from({ length: 9 }, (_, i) => `https://h${i}.example/`).join(',')}`,
  ]) {
    await bad(t, { target: '0311112222', destination }, 400, 'invalid_parameter', 'xml_url')
  }
  // A control character is refused by the strict-text rule of every string (src/api/schema/text.ts) before xml_url: is read.
  await bad(t, { target: '0311112222', destination: 'xml_url:https://a.example/m\n' }, 400, 'invalid_parameter', 'destination: must not contain control characters')
})

t.test('xml_url: needs the ON_THE_FLY_IVR_ALLOWED privilege', async (t) => {
  for (const destination of ['xml_url:https://ivr.example/menu', inline(IVR), 'xml_url:inline_xml://!!!', 'xml_url:ftp://x']) {
    await bad(t, { target: '0600000001', destination }, 403, 'privilege_required', 'ON_THE_FLY_IVR_ALLOWED', AUTH_B)
  }
})

t.test('inline IVR documents', async (t) => {
  t.same((await good(t, { target: '0311112222', destination: inline(IVR) }))?.destination, { kind: 'ivr', source: { kind: 'inline', xml: IVR } })
  t.same((await good(t, { target: '0311112222', destination: inline('<Response><Hangup/></Response>') }))?.destination, {
    kind: 'ivr',
    source: { kind: 'inline', xml: '<Response><Hangup/></Response>' },
  })
  // A document whose base64 has + and / in it, sent URL-safe and without padding.
  const doc = '<IVR><Speak>???>>>~~~ ok</Speak></IVR>'
  const std = b64(doc)
  t.match(std, /[+/]/, 'the standard encoding has + or /')
  t.match(std, /=$/, 'and padding')
  const urlSafe = std.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  t.same((await good(t, { target: '0311112222', destination: `xml_url:inline_xml://${urlSafe}` }))?.destination, { kind: 'ivr', source: { kind: 'inline', xml: doc } })
  t.same((await good(t, { target: '0311112222', destination: `xml_url:inline_xml://${std.replace(/=+$/, '')}` }))?.destination, {
    kind: 'ivr',
    source: { kind: 'inline', xml: doc },
  })

  const broken = [
    'xml_url:inline_xml://',
    'xml_url:inline_xml://!!!!',
    'xml_url:inline_xml://PElWUj4=PC9JVlI+',
    'xml_url:inline_xml://PElWUj48L0lWUj4===',
    'xml_url:inline_xml://PElWU',
    `xml_url:inline_xml://${b64(IVR)} `,
    inline('hello, not XML'),
    inline(''),
    inline('<IVR><Speak>unclosed</IVR>'),
    inline('<Foo><Speak>x</Speak></Foo>'),
    inline('<ivr/>'),
    inline('<IVR/><IVR/>'),
    inline('<!DOCTYPE IVR><IVR/>'),
    inline('<?xml version="1.0"?><!DOCTYPE IVR [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><IVR><Speak>&b;</Speak></IVR>'),
    inline('<!doctype IVR SYSTEM "file:///etc/passwd"><IVR/>'),
    inline(Buffer.from([0x3c, 0x49, 0x56, 0x52, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x49, 0x56, 0x52, 0x3e])),
  ]
  for (const destination of broken) await bad(t, { target: '0311112222', destination }, 400, 'invalid_xml', 'destination')
  // A line break inside the base64: a control character, refused as text before the document is read.
  await bad(t, { target: '0311112222', destination: `xml_url:inline_xml://${b64(IVR).slice(0, 20)}\n${b64(IVR).slice(20)}` }, 400, 'invalid_parameter', 'destination')
})

t.test('parameters of other operations are unknown here', async (t) => {
  for (const key of ['calling_name', 'auto_answer', 'user_name', 'group_name', 'member_answer_timeout', 'calling_number']) {
    await bad(t, { target: '0311112222', destination: 'alice', [key]: 'x' }, 400, 'invalid_parameter', key)
  }
})
