import Koa from 'koa'
import bodyParser from 'koa-bodyparser'
import t from 'tap'
import type { Runtime } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { MAX_FORM_BYTES, NOT_FOUND, xmlCurlRouter } from '../../src/xmlcurl/index.js'
import { serveUntilTeardown } from '../support/serve.js'
import { fixture, freeswitchBody, makeRuntime, originatedLeg, XML_CURL_PASSWORD, XML_CURL_USER } from './helpers.js'

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const AUTH = basic(XML_CURL_USER, XML_CURL_PASSWORD)
const FORM = 'application/x-www-form-urlencoded'

async function start(t: { teardown: (fn: () => Promise<void>) => void }, runtime: () => Runtime, withBodyParser = false): Promise<string> {
  const app = new Koa()
  if (withBodyParser) app.use(bodyParser())
  app.use(xmlCurlRouter({ runtime, logger: silentLogger() }).routes())
  return serveUntilTeardown(t, app)
}

const post = (url: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': FORM, authorization: AUTH, ...headers } })

const runtime = makeRuntime()

t.test('POST /freeswitch/xml_curl with a captured REGISTER form (fixture xml_curl/01-register-1001)', async (t) => {
  const base = await start(t, () => runtime)
  const res = await post(`${base}/freeswitch/xml_curl`, fixture('01-sip-auth-register', { user: 'alice' }).toString(), {
    'user-agent': 'freeswitch-xml/1.0',
    accept: '*/*',
  })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/xml/)
  const xml = await res.text()
  t.match(xml, /<user id="alice" number-alias="1001">/)
  t.match(xml, /<param name="password" value="alice-sip-secret"\/>/)
})

t.test('an answered originated leg, encoded the way FreeSWITCH encodes it (fixture xml_curl/04-originate-1002-xml-default moved to our context)', async (t) => {
  const base = await start(t, () => runtime)
  const endUser = encodeURIComponent(JSON.stringify({ name: 'Suzuki', organization: 'ACME & Co' }))
  const body = freeswitchBody(originatedLeg({ cod_dest_kind: 'group', cod_dest_value: '10', cod_end_user: endUser }))
  const res = await post(`${base}/freeswitch/xml_curl`, body)
  t.equal(res.status, 200)
  const xml = await res.text()
  t.match(xml, /<context name="example.test">/)
  t.match(xml, /<action application="bridge" data="\[leg_timeout=15\]user\/carol@example.test"\/>/)
  t.match(xml, /<action application="export" data="cod_end_user_organization=ACME%20%26%20Co"\/>/)
})

t.test('not ours: 200 with the not-found document', async (t) => {
  const base = await start(t, () => runtime)
  const res = await post(`${base}/freeswitch/xml_curl`, fixture('01-sip-auth-register', { user: '9999' }).toString())
  t.equal(res.status, 200)
  t.equal(await res.text(), NOT_FOUND)
})

t.test('wrong credentials: 401 with WWW-Authenticate, no document', async (t) => {
  const base = await start(t, () => runtime)
  const url = `${base}/freeswitch/xml_curl`
  const body = fixture('01-sip-auth-register', { user: 'alice' }).toString()
  const cases: Array<[string, string | undefined]> = [
    ['wrong password', basic(XML_CURL_USER, 'wrong-password')],
    ['wrong user', basic('admin', XML_CURL_PASSWORD)],
    ['password with a suffix', basic(XML_CURL_USER, `${XML_CURL_PASSWORD}x`)],
    ["a domain's API token", basic('example.test', 'plain-token-for-tests')],
    ['no colon', `Basic ${Buffer.from(XML_CURL_USER + XML_CURL_PASSWORD).toString('base64')}`],
    ['not Basic', `Bearer ${XML_CURL_PASSWORD}`],
    ['garbage', 'Basic !!!'],
    ['no header', undefined],
  ]
  for (const [name, authorization] of cases) {
    const headers: Record<string, string> = { 'content-type': FORM }
    if (authorization !== undefined) headers.authorization = authorization
    const res = await fetch(url, { method: 'POST', body, headers })
    t.equal(res.status, 401, name)
    t.match(res.headers.get('www-authenticate'), /^Basic realm=/, name)
    t.notMatch(await res.text(), /alice-sip-secret/, name)
  }
})

t.test('garbage bodies and wrong content types get the not-found document', async (t) => {
  const base = await start(t, () => runtime)
  const url = `${base}/freeswitch/xml_curl`
  const bodies: Array<[string, string | Uint8Array, Record<string, string>?]> = [
    ['empty', ''],
    ['percent soup', '%%%&&&===%zz%E5%B1&section=%'],
    ['binary', new Uint8Array([0, 255, 254, 10, 13, 0, 38, 61])],
    ['a JSON body sent as a form', JSON.stringify({ section: 'directory', user: 'alice' })],
    ['a valid form as JSON', fixture('01-sip-auth-register', { user: 'alice' }).toString(), { 'content-type': 'application/json' }],
    ['a valid form as text/plain', fixture('01-sip-auth-register', { user: 'alice' }).toString(), { 'content-type': 'text/plain' }],
    ['only a section', 'section=dialplan'],
    ['section twice', 'section=directory&section=dialplan'],
  ]
  for (const [name, body, headers] of bodies) {
    const res = await post(url, body, headers)
    t.equal(res.status, 200, name)
    t.equal(await res.text(), NOT_FOUND, name)
  }
})

t.test('a body over the limit: 413 with the not-found document', async (t) => {
  const base = await start(t, () => runtime)
  const big = fixture('01-sip-auth-register', { user: 'alice', pad: 'x'.repeat(MAX_FORM_BYTES) }).toString()
  const res = await post(`${base}/freeswitch/xml_curl`, big)
  t.equal(res.status, 413)
  t.equal(await res.text(), NOT_FOUND)
})

t.test('only POST on the configured path', async (t) => {
  const base = await start(t, () => runtime)
  t.not((await fetch(`${base}/freeswitch/xml_curl`, { headers: { authorization: AUTH } })).status, 200, 'GET')
  t.equal((await post(`${base}/freeswitch/xml_curl/extra`, 'section=directory')).status, 404)
  t.equal((await post(`${base}/xml_curl`, 'section=directory')).status, 404)
})

t.test('xml_curl.path and the credentials come from the configuration; credentials follow a reload', async (t) => {
  let current = makeRuntime()
  const custom: Runtime = {
    ...current,
    config: { ...current.config, daemon: { ...current.config.daemon, xml_curl: { ...current.config.daemon.xml_curl, path: '/fs' } } },
  }
  current = custom
  const base = await start(t, () => current)
  const body = fixture('01-sip-auth-register', { user: 'alice' }).toString()
  t.equal((await post(`${base}/fs/xml_curl`, body)).status, 200)
  t.equal((await post(`${base}/freeswitch/xml_curl`, body)).status, 404)

  current = { ...custom, config: { ...custom.config, daemon: { ...custom.config.daemon, xml_curl: { ...custom.config.daemon.xml_curl, password: 'rotated-password' } } } }
  t.equal((await post(`${base}/fs/xml_curl`, body)).status, 401, 'old password after reload')
  t.equal((await post(`${base}/fs/xml_curl`, body, { authorization: basic(XML_CURL_USER, 'rotated-password') })).status, 200)
})

t.test('works behind a body parser that already read the form', async (t) => {
  const base = await start(t, () => runtime, true)
  const res = await post(`${base}/freeswitch/xml_curl`, fixture('05-user-call-1002').toString())
  t.equal(res.status, 200)
  t.match(await res.text(), /<user id="bob" number-alias="1002">/)
})
