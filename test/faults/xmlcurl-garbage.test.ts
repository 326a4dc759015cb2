/**
 * Fault: the mod_xml_curl endpoint receives garbage (binary, huge, wrong content type, missing
 * or doubled fields, broken escapes, hostile values, aborted uploads). It never crashes and never
 * answers anything but the "not found" document (200 or 413), 401, or 404/405 for other methods;
 * a real FreeSWITCH request still gets its document afterwards.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { XMLValidator } from 'fast-xml-parser'
import t from 'tap'
import { NOT_FOUND } from '../../src/xmlcurl/document.js'
import { basic, startStack, type Stack } from './harness/in-process.js'

type Body = NonNullable<Parameters<typeof fetch>[1]>['body']

const CAPTURES = new URL('../xmlcurl/fixtures/', import.meta.url)
const AUTH = basic('freeswitch', 'fault-xml-curl-secret')
const FORM = 'application/x-www-form-urlencoded'

/** A captured FreeSWITCH form moved to the fixture's domain. */
const captured = (name: string, changes: Record<string, string> = {}): string => {
  const form = new URLSearchParams(readFileSync(new URL(`${name}.form`, CAPTURES), 'utf8'))
  for (const [k, v] of form) if (v === 'example.test') form.set(k, 'fault.test')
  for (const [k, v] of Object.entries(changes)) form.set(k, v)
  return form.toString()
}

interface Reply {
  readonly status: number
  readonly type: string
  readonly body: string
}

async function post(s: Stack, body: Body | undefined, headers: Record<string, string>, method = 'POST'): Promise<Reply> {
  const res = await fetch(s.daemon.xmlCurlUrl, { method, headers, ...(body !== undefined ? { body } : {}) })
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() }
}

interface Case {
  readonly name: string
  readonly body?: Body
  readonly headers?: Record<string, string>
  readonly method?: string
  /** What the reply must be. */
  readonly expect: 'not_found' | 'too_large' | 'unauthorized' | 'method'
}

const huge = 'a='.padEnd(200 * 1024, 'x')
const manyFields = Array.from({ length: 8000 }, (_, i) => `f${i}=${i}`).join('&')
const hostile = ['<x>', ']]>', '&amp;', "'\"", '${system(id)}', '$${hostname}', '\u0000', '\u202e', 'a\r\nb', '\ud800', '%00']

const cases: Case[] = [
  { name: 'no credentials', body: captured('01-sip-auth-register'), headers: { 'content-type': FORM }, expect: 'unauthorized' },
  { name: 'wrong password', body: captured('01-sip-auth-register'), headers: { 'content-type': FORM, authorization: basic('freeswitch', 'nope') }, expect: 'unauthorized' },
  { name: 'garbage Authorization', body: 'x', headers: { 'content-type': FORM, authorization: 'Basic ###' }, expect: 'unauthorized' },
  { name: 'binary Basic credentials', body: 'x', headers: { 'content-type': FORM, authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00, 0x3a]).toString('base64')}` }, expect: 'unauthorized' },
  { name: 'Bearer', body: 'x', headers: { 'content-type': FORM, authorization: 'Bearer fault-xml-curl-secret' }, expect: 'unauthorized' },
  { name: 'binary body', body: randomBytes(4096), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'binary body, no content type', body: randomBytes(512), headers: { authorization: AUTH }, expect: 'not_found' },
  { name: 'empty body', body: '', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'no body at all', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'huge body (Content-Length)', body: huge, headers: { 'content-type': FORM, authorization: AUTH }, expect: 'too_large' },
  { name: '8000 fields', body: manyFields, headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'JSON content type', body: captured('01-sip-auth-register'), headers: { 'content-type': 'application/json', authorization: AUTH }, expect: 'not_found' },
  { name: 'text/xml content type', body: '<document/>', headers: { 'content-type': 'text/xml', authorization: AUTH }, expect: 'not_found' },
  { name: 'multipart content type', body: captured('04-dialplan-originated'), headers: { 'content-type': 'multipart/form-data; boundary=x', authorization: AUTH }, expect: 'not_found' },
  { name: 'section only', body: 'section=dialplan', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'directory without user', body: 'section=directory&action=sip_auth&domain=fault.test', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'unknown section', body: 'section=configuration&key_value=sofia.conf', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'section twice, different values', body: `${captured('01-sip-auth-register')}&section=dialplan`, headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'broken percent escapes', body: 'section=%zz&%%%=%e0%80%af&key_value=%', headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'unknown user', body: captured('01-sip-auth-register', { user: 'nobody', sip_auth_username: 'nobody' }), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'another domain\'s context', body: captured('05-dialplan-phone', { 'Hunt-Context': 'example.test', 'Caller-Context': 'example.test' }), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
  { name: 'GET', headers: { authorization: AUTH }, method: 'GET', expect: 'method' },
  { name: 'PUT', body: captured('01-sip-auth-register'), headers: { 'content-type': FORM, authorization: AUTH }, method: 'PUT', expect: 'method' },
  ...hostile.flatMap((v): Case[] => [
    { name: `user ${JSON.stringify(v)}`, body: captured('01-sip-auth-register', { user: v, sip_auth_username: v }), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
    { name: `domain ${JSON.stringify(v)}`, body: captured('01-sip-auth-register', { domain: v }), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
    { name: `dialplan context ${JSON.stringify(v)}`, body: captured('05-dialplan-phone', { 'Hunt-Context': v, 'Caller-Context': v }), headers: { 'content-type': FORM, authorization: AUTH }, expect: 'not_found' },
    {
      name: `originated leg variables ${JSON.stringify(v)}`,
      body: captured('04-dialplan-originated', {
        'Hunt-Context': 'fault.test',
        'Caller-Context': 'fault.test',
        'Hunt-Destination-Number': 'cod_route',
        'Caller-Destination-Number': 'cod_route',
        variable_cod_domain: 'fault.test',
        variable_cod_request_id: v,
        variable_cod_dest_kind: 'pstn',
        variable_cod_dest_value: `0311112222${v}`,
      }),
      headers: { 'content-type': FORM, authorization: AUTH },
      expect: 'not_found',
    },
  ]),
]

t.test('garbage at the xml_curl endpoint', async (t) => {
  t.setTimeout(20000)
  const s = await startStack(t)
  for (const c of cases) {
    const r = await post(s, c.body, c.headers ?? {}, c.method)
    switch (c.expect) {
      case 'unauthorized':
        t.equal(r.status, 401, `${c.name}: 401`)
        break
      case 'too_large':
        t.same([r.status, r.body], [413, NOT_FOUND], `${c.name}: 413 with the not-found document`)
        break
      case 'not_found':
        t.same([r.status, r.body], [200, NOT_FOUND], `${c.name}: not found`)
        t.match(r.type, /^text\/xml/, `${c.name}: text/xml`)
        break
      case 'method':
        t.ok(r.status === 404 || r.status === 405, `${c.name}: ${r.status}`)
        break
    }
  }

  // A chunked upload (no Content-Length) that never stops: cut at the limit.
  const chunked = await new Promise<number>((resolve, reject) => {
    const u = new URL(s.daemon.xmlCurlUrl)
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': FORM, authorization: AUTH } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve(413) : reject(e)))
    const chunk = Buffer.alloc(16 * 1024, 0x61)
    let sent = 0
    const pump = () => {
      while (sent < 1024 * 1024 && !req.destroyed) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
  t.equal(chunked, 413, 'endless chunked body: 413')

  // An upload abandoned half way.
  await new Promise<void>((resolve) => {
    const u = new URL(s.daemon.xmlCurlUrl)
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': FORM, authorization: AUTH, 'content-length': '5000' } })
    req.on('error', () => resolve())
    req.write('section=directory&')
    setTimeout(() => {
      req.destroy()
      resolve()
    }, 50)
  })

  // Still serving: a real FreeSWITCH request gets its document, well-formed.
  t.equal(await s.healthz(), 200, 'still up')
  const real = await post(s, captured('01-sip-auth-register', { user: 'ann', sip_auth_username: 'ann' }), { 'content-type': FORM, authorization: AUTH })
  t.equal(real.status, 200)
  t.not(real.body, NOT_FOUND, 'the user document')
  t.equal(XMLValidator.validate(real.body), true, 'well-formed XML')
  t.match(real.body, /<user [^>]*id="ann"/)
})
