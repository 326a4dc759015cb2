/**
 * xml_curl on its own listener (issue 12 item 5; docs/deploy.md "Listeners"): FreeSWITCH's
 * documents (the directory holds every SIP password) are served on `xml_curl.host`:`xml_curl.port`,
 * loopback by default, and never on the API listener. Checked from outside, over real sockets:
 * the configuration rules with their bad cases, where each document is and is not served, the
 * loopback binding, a call whose dialplan the simulator fetched from that listener, and a start
 * that cannot listen. The listener's own auth throttle: listener-throttle.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { daemonSchema } from '../../src/config/schema.js'
import { xmlCurlUrlOf } from '../../src/config/endpoints.js'
import { startDaemon } from '../../src/daemon.js'
import { startStandaloneSimulator } from '../../src/sim/run.js'
import { createLogger } from '../../src/util/logger.js'
import { startHarness } from '../e2e/harness.js'
import { fixture } from './helpers.js'

const SHIPPED = 'conf/daemon.yaml'
/** The shipped domains, for the daemon files written here. */
const DOMAINS = resolve('conf/domains')
const XML_CURL_AUTH = `Basic ${Buffer.from('freeswitch:change-me-xml-curl').toString('base64')}`
const FORM = 'application/x-www-form-urlencoded'
/** The REGISTER authentication FreeSWITCH sends (fixture xml_curl/01-register-1001), for alice of the shipped domain. */
const REGISTER_ALICE = fixture('01-sip-auth-register', { user: 'alice', sip_auth_username: 'alice' }).toString()

const base = { freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' } }
const parse = (more: { http?: object; xml_curl?: object }) =>
  daemonSchema.safeParse({ ...base, ...(more.http !== undefined ? { http: more.http } : {}), xml_curl: { ...base.xml_curl, ...more.xml_curl } })
const issues = (r: ReturnType<typeof parse>): string[] => (r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`))

t.test('configuration: defaults, and every bad value refused with its key', async (t) => {
  const d = parse({})
  t.ok(d.success)
  if (d.success) {
    t.equal(d.data.xml_curl.host, '127.0.0.1', 'loopback by default')
    t.equal(d.data.xml_curl.port, 8081, 'its own port by default')
    t.equal(xmlCurlUrlOf(d.data), 'http://127.0.0.1:8081/freeswitch/xml_curl', 'the URL formula of docs/deploy.md')
    t.equal(xmlCurlUrlOf(d.data, 40123), 'http://127.0.0.1:40123/freeswitch/xml_curl', 'with the port it got')
  }
  for (const [more, why] of [
    [{ xml_curl: { port: -1 } }, /^xml_curl\.port: /],
    [{ xml_curl: { port: 65536 } }, /^xml_curl\.port: /],
    [{ xml_curl: { port: 80.5 } }, /^xml_curl\.port: /],
    [{ xml_curl: { port: '8081' } }, /^xml_curl\.port: /],
    [{ xml_curl: { port: 8080 } }, /^xml_curl\.port: must differ from http\.port \(8080\)/],
    [{ http: { port: 9000 }, xml_curl: { port: 9000 } }, /^xml_curl\.port: must differ from http\.port \(9000\)/],
    [{ xml_curl: { host: '' } }, /^xml_curl\.host: must be an IP address/],
    [{ xml_curl: { host: 'not a host' } }, /^xml_curl\.host: /],
    [{ xml_curl: { host: '127.0.0.1:8081' } }, /^xml_curl\.host: /],
    [{ xml_curl: { host: 'http://127.0.0.1' } }, /^xml_curl\.host: /],
    [{ xml_curl: { host: 8081 } }, /^xml_curl\.host: /],
  ] as const) {
    const r = parse(more)
    t.notOk(r.success, `refused: ${JSON.stringify(more)}`)
    t.match(issues(r).join('; '), why, `  ${issues(r).join('; ')}`)
  }
  for (const more of [
    { xml_curl: { host: '0.0.0.0', port: 9001 } },
    { xml_curl: { host: '::1' } },
    { xml_curl: { host: 'localhost' } },
    { http: { port: 0 }, xml_curl: { port: 0 } },
    { http: { port: 8081 }, xml_curl: { port: 8082 } },
  ]) {
    t.ok(parse(more).success, `accepted: ${JSON.stringify(more)}`)
  }
})

/** A raw HTTP exchange with host:port (any path, any method). */
const send = (host: string, port: number, method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<{ status: number; type: string; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request({ host, port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host, port })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

t.test('the shipped configuration: documents on the xml_curl listener only; a call whose dialplan the simulator fetched there', async (t) => {
  const h = await startHarness({ configFile: SHIPPED })
  t.teardown(() => h.close())
  const d = h.daemon
  t.not(d.xmlCurlPort, d.httpPort, 'two listeners')
  t.equal(d.xmlCurlBaseUrl, `http://127.0.0.1:${d.xmlCurlPort}`)
  t.equal(d.xmlCurlUrl, `http://127.0.0.1:${d.xmlCurlPort}/freeswitch/xml_curl`)

  const doc = await send('127.0.0.1', d.xmlCurlPort, 'POST', '/freeswitch/xml_curl', { authorization: XML_CURL_AUTH, 'content-type': FORM }, REGISTER_ALICE)
  t.equal(doc.status, 200, 'the xml_curl listener serves the directory')
  t.match(doc.body, /<user id="alice"/)

  const onApi = await send('127.0.0.1', d.httpPort, 'POST', '/freeswitch/xml_curl', { authorization: XML_CURL_AUTH, 'content-type': FORM }, REGISTER_ALICE)
  t.equal(onApi.status, 404, 'the API listener does not serve it')
  t.equal((JSON.parse(onApi.body) as { error: { id: string } }).error.id, 'not_found')
  t.notMatch(onApi.body, /alice/, 'and says nothing of the directory')

  t.equal((await send('127.0.0.1', d.xmlCurlPort, 'GET', '/healthz')).status, 404, 'no /healthz on the xml_curl listener')
  t.equal((await send('127.0.0.1', d.xmlCurlPort, 'POST', '/api/call_user', { authorization: XML_CURL_AUTH, 'content-type': 'application/json' }, '{}')).status, 404, 'no API there')
  t.equal((await send('127.0.0.1', d.xmlCurlPort, 'GET', '/freeswitch/xml_curl', { authorization: XML_CURL_AUTH })).status, 405, 'GET of the xml_curl path: 405')
  t.equal((await send('127.0.0.1', d.xmlCurlPort, 'POST', '/freeswitch/xml_curl', { 'content-type': FORM }, REGISTER_ALICE)).status, 401, 'no credentials: 401')

  // Bound to 127.0.0.1 exactly: another loopback address (Linux routes 127/8 to lo) finds no listener.
  t.ok(await accepts('127.0.0.1', d.xmlCurlPort), 'reached on 127.0.0.1')
  t.notOk(await accepts('127.0.0.2', d.xmlCurlPort), 'not bound beyond 127.0.0.1 (127.0.0.2 refused)')

  // The simulator posts to the xml_curl listener: an answered leg is routed and bridged.
  const before = h.callbacks.length
  const reply = await h.post('call_external', { target: '0399990000', destination: 'bob', callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  await h.waitFor('the callback', () => h.callbacks.length > before, 20000)
  const cb = h.callbacks[before]?.body as { result_code: number; uuid: string }
  t.equal(cb.result_code, 0, 'the call was placed')
  const bob = await h.waitFor('bob bridged by the dialplan', () => d.simulator?.liveChannels().find((c) => c.uuid !== cb.uuid && /bob@/.test(c.name) && c.bridgedTo === cb.uuid), 20000)
  t.ok(bob, 'the dialplan, fetched from the xml_curl listener, bridged the destination')
  d.simulator?.remoteHangup(cb.uuid)
})

t.test('a listener that cannot start stops the start, says which, and leaves nothing listening', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-xmlcurl-listener-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const blocker = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => blocker.close(() => r())))
  const taken = (blocker.address() as AddressInfo).port
  const free = createServer()
  await new Promise<void>((r) => free.listen(0, '127.0.0.1', r))
  const httpPort = (free.address() as AddressInfo).port
  await new Promise<void>((r) => free.close(() => r()))

  const r = await startDaemon({ configFile: SHIPPED, journalDir: join(dir, 'journal'), logger: createLogger('silent'), httpPort, xmlCurlPort: taken, simulatorPort: 0 })
  t.notOk(r.ok, 'refused')
  if (!r.ok) t.match(r.error.join('\n'), new RegExp(`^xml_curl: cannot listen on 127\\.0\\.0\\.1:${taken}: .*EADDRINUSE`), r.error.join('; '))
  t.notOk(await accepts('127.0.0.1', httpPort), 'the API listener opened first was closed again')
  // And the journal was released: a daemon starts on the same folder.
  const again = await startDaemon({ configFile: SHIPPED, journalDir: join(dir, 'journal'), logger: createLogger('silent'), httpPort: 0, simulatorPort: 0 })
  t.ok(again.ok, 'the journal folder is free again')
  if (again.ok) await again.value.stop()
})

t.test('a wildcard xml_curl.host: listens everywhere, reached on loopback, and the start warns', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-xmlcurl-listener-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'daemon.yaml'), `freeswitch: { mode: simulator, port: 0 }\nhttp: { port: 0 }\nxml_curl: { host: 0.0.0.0, port: 0, username: freeswitch, password: xml-curl-secret }\ndirectory: ${DOMAINS}\n`)
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
      cb()
    },
  })
  const r = await startDaemon({ configFile: join(dir, 'daemon.yaml'), journalDir: join(dir, 'journal'), logger: createLogger('info', sink), httpPort: 0 })
  if (!r.ok) return t.fail(r.error.join('; '))
  const d = r.value
  t.teardown(() => d.stop())
  t.equal(d.xmlCurlUrl, `http://127.0.0.1:${d.xmlCurlPort}/freeswitch/xml_curl`, 'a wildcard is reached on loopback')
  t.ok(await accepts('127.0.0.2', d.xmlCurlPort), 'bound beyond 127.0.0.1')
  t.ok(lines.some((l) => l.level === 40 && /xml_curl listener is not on loopback/.test(String(l.msg)) && l.host === '0.0.0.0'), 'a warning at start')
  const started = lines.find((l) => l.msg === 'daemon listening')
  t.equal(started?.xml_curl, d.xmlCurlUrl, 'the start line names both listeners')
  t.equal(started?.url, d.baseUrl)
})

t.test('the standalone simulator: the xml_curl listener of the daemon file, or --xml-curl-url when its port is 0', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-xmlcurl-listener-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'daemon.yaml')
  writeFileSync(file, `freeswitch: { mode: freeswitch, port: 0 }\nxml_curl: { port: 0, username: freeswitch, password: xml-curl-secret }\ndirectory: ${DOMAINS}\n`)
  const refused = await startStandaloneSimulator({ configFile: file, timeScale: 1 }, createLogger('silent'))
  t.notOk(refused.ok, 'port 0 without --xml-curl-url: refused')
  if (!refused.ok) t.match(refused.error.join('\n'), /xml_curl\.port is 0.*--xml-curl-url/)
  const given = await startStandaloneSimulator({ configFile: file, timeScale: 1, xmlCurlUrl: 'http://127.0.0.1:9/freeswitch/xml_curl' }, createLogger('silent'))
  if (!given.ok) return t.fail(given.error.join('; '))
  t.equal(given.value.xmlCurlUrl, 'http://127.0.0.1:9/freeswitch/xml_curl', 'the URL given')
  await given.value.stop()
  writeFileSync(file, `freeswitch: { mode: freeswitch, port: 0 }\nxml_curl: { host: 127.0.0.1, port: 18081, username: freeswitch, password: xml-curl-secret }\ndirectory: ${DOMAINS}\n`)
  const derived = await startStandaloneSimulator({ configFile: file, timeScale: 1 }, createLogger('silent'))
  if (!derived.ok) return t.fail(derived.error.join('; '))
  t.equal(derived.value.xmlCurlUrl, 'http://127.0.0.1:18081/freeswitch/xml_curl', 'derived from xml_curl.host and xml_curl.port')
  await derived.value.stop()
})
