/**
 * Strict text (issue 12 item 6; src/api/schema/text.ts): every string parameter of every
 * operation, nested ones included (end_user.*, the object form of a PSTN party, the end_user
 * prefix), refuses lone surrogates and control characters with 400 invalid_parameter naming the
 * parameter; nothing is replaced and nothing reaches the engine. Well-formed text outside ASCII
 * (surrogate pairs, Japanese) still passes where the field takes free text.
 */
import t from 'tap'
import { STRICT_TEXT_RE, strictTextProblem } from '../../src/api/schema/text.js'
import { AUTH_A, errorDescription, operation, startApp, type Harness } from './helpers.js'

/** What a client can put in a JSON string that must never pass: [label, text]. */
const BAD: readonly (readonly [string, string])[] = [
  ['NUL', '\u0000'],
  ['LF', '\n'],
  ['CR', '\r'],
  ['CRLF CRLF (ESL framing)', '\r\n\r\n'],
  ['tab', '\t'],
  ['ESC', '\u001b'],
  ['DEL', '\u007f'],
  ['C1 NEL', '\u0085'],
  ['C1 APC', '\u009f'],
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate', '\udfff'],
  ['reversed pair', '\udc00\ud800'],
  ['high surrogate then a letter', '\ud83dx'],
]

/** A field: the operation, a valid body, and how to put `text` into the parameter named `param`. */
interface Field {
  readonly op: string
  readonly param: string
  readonly body: (text: string) => Record<string, unknown>
}

const endUser = (text: string, key: string) => ({ id: 'c-1', name: 'Jane', [key]: `a${text}b` })
const pstnObject = (o: Record<string, unknown>) => ({ called_number: '0311112222', ...o })

const FIELDS: readonly Field[] = [
  // call_user
  ...['user_id', 'user_name', 'user_label', 'user_extension', 'user_did', 'user_email'].map(
    (k): Field => ({ op: 'call_user', param: k, body: (x) => ({ [k]: `a${x}b`, destination: 'bob' }) }),
  ),
  { op: 'call_user', param: 'destination', body: (x) => ({ user_name: 'alice', destination: `bob${x}` }) },
  { op: 'call_user', param: 'calling_name', body: (x) => ({ user_name: 'alice', destination: 'bob', calling_name: `Jane${x}Doe` }) },
  { op: 'call_user', param: 'callback_url', body: (x) => ({ user_name: 'alice', destination: 'bob', callback_url: `https://cb.example.test/${x}` }) },
  ...['group_id', 'group_name', 'group_label', 'group_extension', 'group_did'].map(
    (k): Field => ({ op: 'call_user', param: k, body: (x) => ({ user_name: 'alice', destination: 'bob', [k]: `a${x}b` }) }),
  ),
  { op: 'call_user', param: 'destination.called_number', body: (x) => ({ user_name: 'alice', destination: { called_number: `031111${x}2222` } }) },
  { op: 'call_user', param: 'destination.calling_number', body: (x) => ({ user_name: 'alice', destination: pstnObject({ calling_number: `0501${x}` }) }) },
  ...['id', 'name', 'organization', 'avatar', 'prefecture'].map(
    (k): Field => ({ op: 'call_user', param: `destination.end_user.${k}`, body: (x) => ({ user_name: 'alice', destination: pstnObject({ end_user: endUser(x, k) }) }) }),
  ),
  { op: 'call_user', param: 'destination', body: (x) => ({ user_name: 'alice', destination: `{name=Jane${x}}0311112222` }) },
  // call_group
  ...['group_id', 'group_name', 'group_label', 'group_extension', 'group_did'].map(
    (k): Field => ({ op: 'call_group', param: k, body: (x) => ({ [k]: `a${x}b`, destination: 'bob' }) }),
  ),
  { op: 'call_group', param: 'destination', body: (x) => ({ group_name: 'sales', destination: `x${x}` }) },
  { op: 'call_group', param: 'calling_name', body: (x) => ({ group_name: 'sales', destination: 'bob', calling_name: `Q${x}` }) },
  { op: 'call_group', param: 'destination.end_user.name', body: (x) => ({ group_name: 'sales', destination: pstnObject({ end_user: endUser(x, 'name') }) }) },
  // call_external
  { op: 'call_external', param: 'target', body: (x) => ({ target: `0311112222${x}`, destination: 'bob' }) },
  { op: 'call_external', param: 'target', body: (x) => ({ target: `{organization=ACME${x}}0311112222`, destination: 'bob' }) },
  { op: 'call_external', param: 'target.called_number', body: (x) => ({ target: { called_number: `${x}0311112222` }, destination: 'bob' }) },
  ...['id', 'name', 'organization', 'avatar', 'prefecture'].map(
    (k): Field => ({ op: 'call_external', param: `target.end_user.${k}`, body: (x) => ({ target: pstnObject({ end_user: endUser(x, k) }), destination: 'bob' }) }),
  ),
  { op: 'call_external', param: 'destination', body: (x) => ({ target: '0311112222', destination: `xml_url:https://ivr.example.test/${x}` }) },
  { op: 'call_external', param: 'callback_url', body: (x) => ({ target: '0311112222', destination: 'bob', callback_url: `https://cb.example.test/a${x}` }) },
  // initiate_call
  { op: 'initiate_call', param: 'user_name', body: (x) => ({ user_name: `alice${x}`, destination: 'bob' }) },
  { op: 'initiate_call', param: 'pstn_number', body: (x) => ({ pstn_number: `0311112222${x}`, destination: 'bob' }) },
  { op: 'initiate_call', param: 'destination', body: (x) => ({ user_name: 'alice', destination: `bob${x}` }) },
  { op: 'initiate_call', param: 'ani', body: (x) => ({ user_name: 'alice', destination: '0311112222', ani: `0501${x}` }) },
  { op: 'initiate_call', param: 'group_name', body: (x) => ({ user_name: 'alice', destination: 'bob', group_name: `sales${x}` }) },
]

/** The words of the strict-text rule, heard before any field's own rule. */
const STRICT_WORDS = /must not contain control characters|must be well-formed Unicode/

let h: Harness
t.before(async () => {
  h = await startApp()
})
t.teardown(() => h.close())

t.test('the rule itself: which characters, and the words', async (t) => {
  t.equal(strictTextProblem('Jane Doe 山田 😀'), undefined, 'pairs and non-ASCII text are fine')
  t.match(strictTextProblem('ab\u0000'), /control characters \(found U\+0000 at position 3\)/)
  t.match(strictTextProblem('\u0085'), /found U\+0085/)
  t.match(strictTextProblem('a\ud800b'), /well-formed Unicode \(found a lone surrogate U\+D800 at position 2\)/)
  t.match(strictTextProblem('\udc00\ud800'), /lone surrogate U\+DC00 at position 1/)
  t.match(strictTextProblem('x\ud83d'), /lone surrogate U\+D83D at position 2/)
  for (const [label, bad] of BAD) t.notOk(STRICT_TEXT_RE.test(`a${bad}b`), `the pattern refuses ${label}`)
  t.ok(STRICT_TEXT_RE.test('😀 日本'), 'the pattern takes pairs')
})

t.test('every string parameter refuses every bad character: 400 invalid_parameter naming it, nothing originated', async (t) => {
  let checked = 0
  for (const field of FIELDS) {
    const call = operation(h, field.op)
    for (const [label, bad] of BAD) {
      const r = await call.bad(t, field.body(bad), 400, 'invalid_parameter', field.param)
      const d = errorDescription(r)
      t.match(d, STRICT_WORDS, `${field.op} ${field.param}, ${label}: the strict-text rule is what the client hears`)
      checked++
    }
  }
  t.equal(checked, FIELDS.length * BAD.length)
})

t.test('percent-encoded bad text in an end_user prefix is refused too (decoded, then checked)', async (t) => {
  const call = operation(h, 'call_external')
  for (const enc of ['%00', '%0A', '%0D%0A%0D%0A', '%C2%85', '%ED%A0%80', '%FF']) {
    await call.bad(t, { target: `{name=Jane${enc}Doe}0311112222`, destination: 'bob' }, 400, 'invalid_parameter', 'target')
  }
})

t.test('well-formed text outside ASCII passes where the field takes free text', async (t) => {
  const plan = await operation(h, 'call_external').good(t, {
    target: { called_number: '0311112222', end_user: { name: '山田 太郎 😀', organization: 'Ａ社', prefecture: '東京都' } },
    destination: 'bob',
  })
  t.ok(plan !== undefined, 'a plan')
  t.match(JSON.stringify(plan), /山田 太郎 😀/, 'the text is kept exactly, not replaced')
})

t.test('length caps hold (docs/api.md)', async (t) => {
  const call = operation(h, 'call_external')
  const withEndUser = (e: Record<string, string>) => ({ target: { called_number: '0311112222', end_user: e }, destination: 'bob' })
  await call.good(t, withEndUser({ name: 'n'.repeat(256), avatar: `https://a.example.test/${'p'.repeat(2000)}` }))
  await call.bad(t, withEndUser({ name: 'n'.repeat(257) }), 400, 'invalid_parameter', 'target.end_user.name')
  await call.bad(t, withEndUser({ avatar: 'a'.repeat(2049) }), 400, 'invalid_parameter', 'target.end_user.avatar')
  await operation(h, 'call_user').bad(t, { user_name: 'alice', destination: 'bob', calling_name: 'x'.repeat(65) }, 400, 'invalid_parameter', 'calling_name')
  await operation(h, 'call_user').bad(t, { user_label: 'l'.repeat(129), destination: 'bob' }, 400, 'invalid_parameter', 'user_label')
  await operation(h, 'call_user').bad(t, { user_name: 'alice', destination: 'bob', callback_url: `https://cb.example.test/${'c'.repeat(2048)}` }, 400, 'invalid_parameter', 'callback_url')
})

t.test('invalid UTF-8 in the body is refused, not replaced with U+FFFD; a real U+FFFD passes', async (t) => {
  const { request } = await import('node:http')
  const sendRaw = (body: Buffer): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const u = new URL(`${h.base}/api/call_external`)
      const req = request(
        { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { authorization: AUTH_A, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  const json = (name: Buffer): Buffer =>
    Buffer.concat([Buffer.from('{"target":{"called_number":"0311112222","end_user":{"name":"'), name, Buffer.from('"}},"destination":"bob"}')])
  const before = h.engine.plans.length
  // A stray byte, a truncated 4-byte sequence (3 bytes -> one U+FFFD: same length), an encoded surrogate, an overlong '/'.
  for (const bad of [[0xff], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
    const r = await sendRaw(json(Buffer.from([0x4a, ...bad, 0x4b])))
    t.equal(r.status, 400, `bytes ${bad.map((b) => b.toString(16)).join(' ')}: 400 (${r.text})`)
    t.match(r.text, /"id":"invalid_parameter".*not valid UTF-8/)
  }
  t.equal(h.engine.plans.length, before, 'nothing reached the engine')
  const fine = await sendRaw(json(Buffer.from('J\ufffdK 😀', 'utf8')))
  t.equal(fine.status, 200, `a real U+FFFD is text like any other (${fine.text})`)
})
