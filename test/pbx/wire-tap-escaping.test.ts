/**
 * One way into ESL and XML (issue 12 item 7), the unit side of the wire tap (wire-tap.test.ts):
 * the xml_curl documents hold values to the ESL builder's own check and encoding
 * (pbx/commands.ts checkValue, percentEncode), and debug logs of ESL commands lose the values
 * of secret variables (pbx/redact.ts).
 */
import t from 'tap'
import { app, checkValue, decodeEndUser, encodeEndUser, originate, percentEncode, PATTERNS } from '../../src/pbx/commands.js'
import { REDACTED, isSecretVariable, redactApp, redactCommand } from '../../src/pbx/redact.js'
import { pct, safe } from '../../src/xmlcurl/values.js'
import { INJECTIONS, UNICODE } from '../abuse/corpus.js'

/** A value as an assertion name: ASCII only (a raw U+2028 or NEL would break the TAP stream). */
const show = (s: string): string => JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const corpus = [...INJECTIONS, ...UNICODE.filter((u) => !/[\uD800-\uDFFF]/u.test(u)), 'https://a.example.test/~user/pic.png', "~ ' ( ) ! *", '\r\n\r\n', '^^:a:b']

t.test('free text is encoded once, the same way for ESL and documents, and decodes back', async (t) => {
  for (const s of corpus) {
    const e = percentEncode(s)
    t.equal(pct(s), e, `xml_curl pct is the builder's encoding: ${show(s)}`)
    t.ok(PATTERNS.token.test(e) || e.length > 2048, 'a token')
    t.doesNotThrow(() => safe(e), 'passes safe() (application data)')
    t.equal(decodeURIComponent(e), s, 'decodes back')
  }
  // Found while unifying: encodeURIComponent keeps `~`, which safe() refused, so an end_user or
  // an xml_url with a `~` (a home-page avatar URL) broke the dialplan document.
  t.doesNotThrow(() => safe(pct(JSON.stringify({ avatar: 'https://a.example.test/~user/pic.png' }))))
  const eu = { name: 'Jane ~ Doe', avatar: 'https://a.example.test/~u' }
  t.same(decodeEndUser(encodeEndUser(eu)), { ok: true, value: eu })
})

t.test('safe() is the builder\'s appValue check: what one refuses, the other refuses', async (t) => {
  for (const s of [...corpus, 'a/b=c', 'user/alice@example.test', '%41', '']) {
    const builder = checkValue('appValue', 'x', s).ok
    let doc = true
    try {
      safe(s)
    } catch {
      doc = false
    }
    t.equal(doc, builder, show(s))
  }
  for (const bad of ['${x}', 'a b', 'a,b', "a'b", 'a|b', 'a{b', 'a[b', 'a^b', 'a:b', 'a;b', 'a\nb']) t.throws(() => safe(bad), show(bad))
})

t.test('redaction: secret variables lose their values in logs, nothing else changes', async (t) => {
  for (const n of ['sip_auth_password', 'sip_auth_username', 'gateway_password', 'sip_h_X-Auth-Token', 'api_key', 'my_secret']) t.ok(isSecretVariable(n), n)
  for (const n of ['origination_uuid', 'cod_end_user', 'cod_request_id', 'sip_h_Call-Info', 'call_timeout', 'auto_answer']) t.notOk(isSecretVariable(n), n)
  const originate =
    "originate {originate_timeout=30,sip_auth_password=hunter2,origination_caller_id_name='Jane Doe'}[origination_uuid=u1,sip_h_X-Auth-Token=tok]sofia/gateway/g/1 9 XML ctx"
  t.equal(
    redactCommand(originate),
    `originate {originate_timeout=30,sip_auth_password=${REDACTED},origination_caller_id_name='Jane Doe'}[origination_uuid=u1,sip_h_X-Auth-Token=${REDACTED}]sofia/gateway/g/1 9 XML ctx`,
  )
  t.equal(redactCommand('uuid_setvar 0f6c1b7e-0000-4000-8000-000000000001 sip_auth_password hunter2'), `uuid_setvar 0f6c1b7e-0000-4000-8000-000000000001 sip_auth_password ${REDACTED}`)
  t.equal(redactCommand('uuid_setvar 0f6c1b7e-0000-4000-8000-000000000001 cod_role member'), 'uuid_setvar 0f6c1b7e-0000-4000-8000-000000000001 cod_role member')
  t.equal(redactCommand('uuid_kill 0f6c1b7e-0000-4000-8000-000000000001 NORMAL_CLEARING'), 'uuid_kill 0f6c1b7e-0000-4000-8000-000000000001 NORMAL_CLEARING')
  const set = app('set', 'sip_auth_password=hunter2')
  const exp = app('export', 'nolocal:api_token=abc')
  const plain = app('set', 'call_timeout=30')
  if (!set.ok || !exp.ok || !plain.ok) throw new Error('app() refused a plain value')
  t.same(redactApp(set.value), { app: 'set', arg: `sip_auth_password=${REDACTED}` })
  t.same(redactApp(exp.value), { app: 'export', arg: `nolocal:api_token=${REDACTED}` })
  t.same(redactApp(plain.value), { app: 'set', arg: 'call_timeout=30' })
})

t.test('the largest end_user the API accepts still fits an originate (the token cap follows docs/api.md)', async (t) => {
  // 3-byte characters (9 encoded characters each) and quotes (escaped in JSON) are the worst case.
  const worst = (n: number): string => '山"'.repeat(n / 2)
  const endUser = { id: worst(256), name: worst(256), organization: worst(256), prefecture: worst(256), avatar: worst(2048) }
  const encoded = encodeEndUser(endUser)
  t.ok(encoded.length > 2048, `larger than the old cap (${encoded.length})`)
  const r = originate({
    legs: [{ uuid: '0f6c1b7e-0000-4000-8000-000000000001', endpoint: { kind: 'gateway', gateway: 'pstn', number: '0311112222' }, vars: { cod_end_user: encoded } }],
    timeoutSec: 30,
    target: { kind: 'park' },
  })
  t.ok(r.ok, r.ok ? 'built' : JSON.stringify(r.error))
  t.same(decodeEndUser(encoded), { ok: true, value: endUser })
})
