/**
 * The xml_curl listener answers on node:http since issue 15 (src/xmlcurl/listener.ts); before, a
 * Koa application ran the xml_curl router with @koa/router's allowedMethods(). Both are started
 * here on the same configuration and asked the same requests, over real sockets: the route, other
 * paths and methods, credentials, bodies too large or not forms. Status, the headers that carry
 * meaning and the body must agree. Then what only the listener does: its guard (the daemon's auth
 * throttle) and the metrics hook.
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import Koa from 'koa'
import t from 'tap'
import type { Runtime } from '../../src/runtime/store.js'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { MAX_FORM_BYTES, xmlCurlListener, xmlCurlRouter, type ListenerGuard } from '../../src/xmlcurl/index.js'
import type { XmlCurlAnswer } from '../../src/xmlcurl/router.js'
import { fixture, freeswitchBody, makeRuntime, originatedLeg, XML_CURL_PASSWORD, XML_CURL_USER } from './helpers.js'

const AUTH = `Basic ${Buffer.from(`${XML_CURL_USER}:${XML_CURL_PASSWORD}`).toString('base64')}`
const WRONG = `Basic ${Buffer.from(`${XML_CURL_USER}:wrong`).toString('base64')}`
const FORM = 'application/x-www-form-urlencoded'

interface Reply {
  readonly status: number
  readonly allow: string | undefined
  readonly type: string | undefined
  readonly authenticate: string | undefined
  readonly body: string
}

function send(port: number, method: string, path: string, headers: Record<string, string>, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, type: res.headers['content-type'], authenticate: res.headers['www-authenticate'], body: text }),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function listen(t: { teardown: (fn: () => Promise<void>) => void }, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return (server.address() as AddressInfo).port
}

/** The Koa application the daemon ran before issue 15 (its error handler, the router, allowedMethods). */
function koaApp(runtime: () => Runtime): Koa {
  const app = new Koa()
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch {
      ctx.status = 500
      ctx.body = ''
    }
  })
  const router = xmlCurlRouter({ runtime, logger: silentLogger() })
  app.use(router.routes())
  app.use(router.allowedMethods())
  return app
}

const runtime = makeRuntime()
const register = fixture('01-sip-auth-register', { user: 'alice' }).toString()
const dialplan = freeswitchBody(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }))

t.test('the node:http listener answers as the Koa application did', async (t) => {
  const koaPort = await listen(t, createServer(koaApp(() => runtime).callback()))
  const nodePort = await listen(t, createServer(xmlCurlListener({ runtime: () => runtime, logger: silentLogger() })))
  const ok = { authorization: AUTH, 'content-type': FORM }
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['POST', '/freeswitch/xml_curl', ok, register],
    ['POST', '/freeswitch/xml_curl', ok, dialplan],
    ['POST', '/freeswitch/xml_curl', ok, 'section=configuration'],
    ['POST', '/freeswitch/xml_curl', ok, ''],
    ['POST', '/freeswitch/xml_curl', { ...ok, 'content-type': 'text/plain' }, register],
    ['POST', '/freeswitch/xml_curl', { 'content-type': FORM }, register],
    ['POST', '/freeswitch/xml_curl', { ...ok, authorization: WRONG }, register],
    ['POST', '/freeswitch/xml_curl', { ...ok, authorization: 'Bearer x' }, register],
    ['POST', '/freeswitch/xml_curl', ok, `${register}&pad=${'x'.repeat(MAX_FORM_BYTES)}`],
    ['POST', '/freeswitch/xml_curl/', ok, register],
    ['POST', '/FreeSWITCH/XML_CURL', ok, register],
    ['POST', '/freeswitch/xml_curl?x=1', ok, register],
    ['POST', '/freeswitch/xml_curl//', ok, register],
    ['POST', '/freeswitch/xml_curl/extra', ok, register],
    ['POST', '/freeswitch/xml_curlx', ok, register],
    ['POST', '/freeswitch', ok, register],
    ['POST', '/xml_curl', ok, register],
    ['POST', '/', ok, register],
    ['POST', '/freeswitch/xml%5Fcurl', ok, register],
    ['GET', '/freeswitch/xml_curl', ok, ''],
    ['PUT', '/freeswitch/xml_curl', ok, register],
    ['DELETE', '/freeswitch/xml_curl', ok, ''],
    ['PATCH', '/freeswitch/xml_curl/', ok, ''],
    ['OPTIONS', '/freeswitch/xml_curl', {}, ''],
    ['PROPFIND', '/freeswitch/xml_curl', {}, ''],
    ['GET', '/healthz', {}, ''],
    ['GET', '/api/call_user', {}, ''],
    ['OPTIONS', '/elsewhere', {}, ''],
    ['PROPFIND', '/elsewhere', {}, ''],
  ]
  for (const [method, path, headers, body] of cases) {
    const [before, now] = await Promise.all([send(koaPort, method, path, headers, body), send(nodePort, method, path, headers, body)])
    t.same(now, before, `${method} ${path} ${headers.authorization === AUTH ? '' : '(credentials differ) '}${body.length} bytes`)
  }
  const head = await send(nodePort, 'HEAD', '/freeswitch/xml_curl', {}, '')
  t.equal(head.status, (await send(koaPort, 'HEAD', '/freeswitch/xml_curl', {}, '')).status, 'HEAD')
})

t.test('the guard: a blocked client gets its refusal before anything; every 401 is counted with the name it claimed', async (t) => {
  const failures: Array<[string | undefined, string | undefined]> = []
  let blocking = false
  const guard: ListenerGuard = {
    blocked: () => (blocking ? { status: 429, retryAfterSec: 7, body: { result_code: 500, error: { id: 'too_many_requests' } } } : undefined),
    failed: (address, claimed) => failures.push([address, claimed]),
  }
  const answers: XmlCurlAnswer[] = []
  const port = await listen(t, createServer(xmlCurlListener({ runtime: () => runtime, logger: silentLogger(), guard, onAnswer: (a) => answers.push(a) })))
  t.equal((await send(port, 'POST', '/freeswitch/xml_curl', { authorization: WRONG, 'content-type': FORM }, register)).status, 401)
  t.equal((await send(port, 'POST', '/freeswitch/xml_curl', { 'content-type': FORM }, register)).status, 401)
  t.same(failures, [
    ['127.0.0.1', XML_CURL_USER],
    ['127.0.0.1', undefined],
  ])
  t.equal((await send(port, 'POST', '/freeswitch/xml_curl', { authorization: AUTH, 'content-type': FORM }, register)).status, 200)
  t.equal(failures.length, 2, 'a success is not a failure')
  t.same(
    answers.map((a) => [a.section, a.outcome]),
    [
      ['other', 'refused'],
      ['other', 'refused'],
      ['directory', 'found'],
    ],
    'the metrics hook heard every fetch',
  )
  t.ok(answers.every((a) => a.seconds >= 0 && a.seconds < 60))

  blocking = true
  for (const path of ['/freeswitch/xml_curl', '/elsewhere']) {
    const refused = await new Promise<{ status: number; retry: unknown; cache: unknown; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { authorization: AUTH, 'content-type': FORM }, agent: false }, (res) => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString('utf8')))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retry: res.headers['retry-after'], cache: res.headers['cache-control'], body: text }))
      })
      req.on('error', reject)
      req.end(register)
    })
    t.same(refused, { status: 429, retry: '7', cache: 'no-store', body: '{"result_code":500,"error":{"id":"too_many_requests"}}' }, `blocked on ${path}`)
  }
  t.equal(answers.length, 3, 'a blocked request reaches no route')
})

t.test('an exception in the exchange is a bare 500, and the listener goes on', async (t) => {
  let calls = 0
  const flaky = (): Runtime => {
    calls++
    if (calls === 2) throw new Error('boom')
    return runtime
  }
  const port = await listen(t, createServer(xmlCurlListener({ runtime: flaky, logger: silentLogger() })))
  const failed = await send(port, 'POST', '/freeswitch/xml_curl', { authorization: AUTH, 'content-type': FORM }, register)
  t.same([failed.status, failed.body], [500, ''])
  t.equal((await send(port, 'POST', '/freeswitch/xml_curl', { authorization: AUTH, 'content-type': FORM }, register)).status, 200, 'the next request is served')
})

t.test('per-fetch log lines: written at debug, not built at info', async (t) => {
  const linesAt = async (level: 'debug' | 'info'): Promise<Array<Record<string, unknown>>> => {
    const lines: Array<Record<string, unknown>> = []
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
        cb()
      },
    })
    const port = await listen(t, createServer(xmlCurlListener({ runtime: () => runtime, logger: createLogger(level, sink) })))
    await send(port, 'POST', '/freeswitch/xml_curl', { authorization: AUTH, 'content-type': FORM }, register)
    await send(port, 'POST', '/freeswitch/xml_curl', { authorization: AUTH, 'content-type': FORM }, 'section=phrases')
    await send(port, 'POST', '/freeswitch/xml_curl', { authorization: WRONG, 'content-type': FORM }, register)
    return lines
  }
  const debug = await linesAt('debug')
  t.ok(debug.some((l) => l.msg === 'xml_curl document served' && l.section === 'directory'), 'a served document')
  t.ok(debug.some((l) => l.msg === 'xml_curl not found' && l.section === 'phrases' && l.reason === 'section phrases'), 'a not-found answer with its reason')
  const info = await linesAt('info')
  t.same(
    info.map((l) => l.msg),
    ['xml_curl request with wrong credentials'],
    'at info only the refusal',
  )
})
