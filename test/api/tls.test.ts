/**
 * HTTPS on the API listener (`http.tls`, docs/deploy.md "HTTPS"), on the whole daemon over the
 * simulator: a client trusting the test's certificate gets its answers and the daemon reports an
 * https:// base URL; plain HTTP on that port gets nothing; TLS 1.1 is refused even where the
 * process's own defaults would allow it; a reload takes a renewed pair for the next connections
 * and keeps the running one when the new pair is bad (and says that removing `http.tls` waits
 * for a restart); CTI works as wss:// with a ticket for a
 * wss:// URI; a certificate that cannot be read refuses the start, naming the file
 * (`cod start` included). The loader's refusals one by one: test/net/tls.test.ts.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import tls, { type TLSSocket } from 'node:tls'
import t, { type Test } from 'tap'
import WebSocket from 'ws'
import { startDaemon, type Daemon } from '../../src/daemon.js'
import { createLogger } from '../../src/util/logger.js'
import { cod, tempDir } from '../cli/run-cod.js'
import { DEMO_AUTH } from '../e2e/harness.js'
import { startTestDaemon } from '../support/daemon.js'
import { makeCertPair, noOpenssl, writeTlsConfig, type CertPair } from '../net/certs.js'

t.setTimeout(120_000)
if (noOpenssl !== undefined) t.plan(0, noOpenssl)

// The process's defaults made as weak as `--tls-min-v1.0` and an OpenSSL configuration at
// security level 0 would make them: the daemon must refuse TLS 1.1 by its own setting. The
// first test shows a server on these defaults does accept it (so the client can speak it).
tls.DEFAULT_MIN_VERSION = 'TLSv1'
tls.DEFAULT_CIPHERS = `${tls.DEFAULT_CIPHERS}:@SECLEVEL=0`
const TLS11 = { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' } as const

interface Reply {
  readonly status: number
  readonly body: string
  readonly fingerprint256: string
}

/** One request on a connection of its own (no agent: each sees the certificate served now). */
function send(url: string, ca: Buffer, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: opts.method ?? 'GET', ca, agent: false, headers: opts.headers ?? {} }, (res) => {
      const fingerprint256 = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint256 }))
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

/** A bare handshake: the protocol agreed and the certificate seen, or the error's code. */
function handshake(port: number, options: tls.ConnectionOptions): Promise<{ protocol: string | null; fingerprint256: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...options })
    socket.once('secureConnect', () => {
      resolve({ protocol: socket.getProtocol(), fingerprint256: socket.getPeerCertificate().fingerprint256 })
      socket.end()
    })
    socket.once('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
  })
}

interface Started {
  readonly daemon: Daemon
  readonly dir: string
  readonly a: CertPair
  readonly b: CertPair
  readonly logs: Array<Record<string, unknown>>
  /** Copies a pair's files over the ones daemon.yaml names (as a renewal does). */
  install(cert: CertPair, key: CertPair): void
}

/** The daemon on HTTPS with pair `a` installed as tls/current.*.pem (pair `b` ready for a renewal). */
async function startTlsDaemon(t: Test, requestTimeoutMs?: number): Promise<Started> {
  const dir = tempDir(t, 'tls-daemon')
  const certs = join(dir, 'certs')
  mkdirSync(certs)
  const a = makeCertPair(certs, 'a')
  const b = makeCertPair(certs, 'b')
  mkdirSync(join(dir, 'tls'))
  const install = (cert: CertPair, key: CertPair): void => {
    copyFileSync(cert.certFile, join(dir, 'tls/current.cert.pem'))
    copyFileSync(key.keyFile, join(dir, 'tls/current.key.pem'))
  }
  install(a, a)
  const configFile = writeTlsConfig(dir, { cert_file: 'tls/current.cert.pem', key_file: 'tls/current.key.pem' }, requestTimeoutMs)
  const logs: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>)
      cb()
    },
  })
  const daemon = await startTestDaemon(t, { configFile, logger: createLogger('info', sink), simulatorPort: 0, simulatorTimeScale: 0.05 })
  return { daemon, dir, a, b, logs, install }
}

t.test('control: on these process defaults a server that sets no minimum accepts TLS 1.1', async (t) => {
  const dir = tempDir(t, 'tls-control')
  const pair = makeCertPair(dir, 'control')
  const server = tls.createServer({ cert: pair.cert, key: pair.key }, (s) => s.end())
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  const port = (server.address() as { port: number }).port
  t.same(await handshake(port, { ...TLS11, ca: pair.cert }), { protocol: 'TLSv1.1', fingerprint256: pair.fingerprint256 })
})

t.test('HTTPS: trusted client served, https:// base URL, plain HTTP and TLS 1.1 refused', async (t) => {
  const { daemon, a, logs } = await startTlsDaemon(t)
  t.match(daemon.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/, 'the base URL the daemon reports is https://')
  t.match(logs.find((l) => l.msg === 'daemon listening'), { url: daemon.baseUrl })
  t.match(logs.find((l) => l.msg === 'API listener on HTTPS (TLS 1.2 and later)'), { subject: 'CN=a', cert_file: /tls\/current\.cert\.pem$/ })

  const health = await send(`${daemon.baseUrl}/healthz`, a.cert)
  t.equal(health.status, 200)
  t.same(JSON.parse(health.body), { status: 'ok', freeswitch: 'connected' })
  t.equal(health.fingerprint256, a.fingerprint256, 'the configured certificate')
  const call = await send(`${daemon.baseUrl}/api/call_user`, a.cert, {
    method: 'POST',
    headers: { authorization: DEMO_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ user_name: 'nobody', destination: 'bob' }),
  })
  t.equal(call.status, 404, 'the API answers over HTTPS (user_not_found)')

  const port = daemon.httpPort
  const plain = await new Promise<string>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => resolve(`answered ${res.statusCode}`))
    req.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`))
    req.end()
  })
  t.match(plain, /^error (ECONNRESET|EPIPE)$/, `plain HTTP on the HTTPS port gets no answer (${plain})`)

  t.match(await handshake(port, { ...TLS11, ca: a.cert }), { error: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' }, 'TLS 1.1 refused')
  t.match(await handshake(port, { maxVersion: 'TLSv1.2', ca: a.cert }), { protocol: 'TLSv1.2' }, 'TLS 1.2 served')
  t.match(await handshake(port, { ca: a.cert }), { protocol: 'TLSv1.3' }, 'TLS 1.3 served')
})

t.test('a connection that never completes its handshake is closed after http.request_timeout_ms', async (t) => {
  // The smallest setting (1 s); Node's own bound for a handshake is 120 s.
  const { daemon } = await startTlsDaemon(t, 1000)
  const socket = connect(daemon.httpPort, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  const openedAt = Date.now()
  const closedAfter = await new Promise<number | 'still open'>((resolve) => {
    const timer = setTimeout(() => resolve('still open'), 10_000)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(Date.now() - openedAt)
    })
    socket.on('error', () => undefined)
  })
  t.ok(typeof closedAfter === 'number' && closedAfter >= 900, `closed by the server after about 1 s (${closedAfter})`)
})

t.test('reload: a renewed pair for new connections; a bad pair keeps the running one', async (t) => {
  const { daemon, dir, a, b, logs, install } = await startTlsDaemon(t)
  const port = daemon.httpPort
  t.match(await handshake(port, { ca: a.cert }), { fingerprint256: a.fingerprint256 })

  install(b, b)
  t.same(await daemon.reload(), { ok: true, value: undefined })
  t.match(await handshake(port, { ca: b.cert }), { fingerprint256: b.fingerprint256 }, 'new connections get the renewed certificate')
  t.match(await handshake(port, { ca: a.cert }), { error: /^(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/ }, 'and no longer the old one')
  t.equal((await send(`${daemon.baseUrl}/healthz`, b.cert)).status, 200)
  t.match(logs.find((l) => l.msg === 'TLS certificate reloaded: new connections get it'), { subject: 'CN=b' })
  t.match(await handshake(port, { ...TLS11, ca: b.cert }), { error: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' }, 'the reloaded context still refuses TLS 1.1')

  // A renewal half done: the new certificate (a's) with the old key (b's).
  install(a, b)
  const refused = await daemon.reload()
  t.same(refused, { ok: false, error: [`${join(dir, 'daemon.yaml')}: http.tls.key_file: ${join(dir, 'tls/current.key.pem')} is not the private key of the certificate in ${join(dir, 'tls/current.cert.pem')}`] })
  t.match(logs.find((l) => l.msg === 'configuration reload refused; the running configuration stays'), { problems: refused.ok ? [] : refused.error })
  t.match(await handshake(port, { ca: b.cert }), { fingerprint256: b.fingerprint256 }, 'the running pair stays')
  t.equal((await send(`${daemon.baseUrl}/healthz`, b.cert)).status, 200)

  // http.tls removed: the reload is taken (domains...), the listener stays HTTPS until a restart.
  const configFile = join(dir, 'daemon.yaml')
  writeFileSync(configFile, readFileSync(configFile, 'utf8').replace(/, tls: \{[^}]*\}/, ''))
  t.same(await daemon.reload(), { ok: true, value: undefined })
  t.ok(logs.some((l) => l.msg === 'http.tls added or removed: the API listener switches between HTTP and HTTPS at the next start only' && l.level === 40), 'a warning says when it applies')
  t.match(await handshake(port, { ca: b.cert }), { fingerprint256: b.fingerprint256 }, 'still HTTPS, with the running pair')
})

t.test('CTI over wss://, with a ticket for a wss:// URI', async (t) => {
  const { daemon, a } = await startTlsDaemon(t)
  const uri = `${daemon.baseUrl.replace(/^https:/, 'wss:')}/api/ws_cti?app_name=crm&user_name=alice`
  const issued = await send(`${daemon.baseUrl}/api/gen_ws_ticket`, a.cert, {
    method: 'POST',
    headers: { authorization: DEMO_AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ uri }),
  })
  t.equal(issued.status, 200, issued.body)
  const { ticket } = JSON.parse(issued.body) as { ticket: string }
  const ws = new WebSocket(`${uri}&ticket=${ticket}`, { ca: a.cert })
  t.teardown(() => ws.terminate())
  const first = await new Promise<Record<string, unknown>>((resolve, reject) => {
    ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as Record<string, unknown>))
    ws.once('error', reject)
  })
  t.match(first, { type: 'initial_info', connection: { domain: 'example.test', user_id: '1', app_name: 'crm' } })

  const plain = new WebSocket(`ws://127.0.0.1:${daemon.httpPort}/api/ws_cti?app_name=crm&user_name=alice`, { headers: { authorization: DEMO_AUTH } })
  const refused = await new Promise<string>((resolve) => {
    plain.once('open', () => resolve('open'))
    plain.once('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code ?? e.message}`))
  })
  t.match(refused, /^error /, `ws:// on the HTTPS port does not open (${refused})`)
})

t.test('a certificate that cannot be read refuses the start, naming the file', async (t) => {
  const dir = tempDir(t, 'tls-bad')
  const a = makeCertPair(dir, 'a')
  const configFile = writeTlsConfig(dir, { cert_file: 'renewed.cert.pem', key_file: a.keyFile })
  const expected = `${configFile}: http.tls.cert_file: cannot read ${join(dir, 'renewed.cert.pem')}: ENOENT`
  const started = await startDaemon({ configFile, logger: createLogger('silent'), httpPort: 0, simulatorPort: 0 })
  t.same(started.ok ? [] : started.error, [expected])

  const r = await cod(['start', '--config', configFile])
  t.equal(r.code, 1, 'cod start exits 1')
  t.equal(r.stderr, `daemon not started:\n  ${expected}\n`)
})
