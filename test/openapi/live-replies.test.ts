/**
 * Every reply the end-to-end tests see matches the OpenAPI document the daemon serves (issue 16
 * item 1). Some test/e2e files run as child processes with COD_E2E_RECORD naming a file, so
 * their harness appends each reply (test/e2e/harness.ts recordReply); then this file adds the
 * error replies those files do not provoke (401, 400, 404, 409, 413, 415, 405, the ticket
 * route, the throttle's 429) through the same harness, and checks every record with ajv against
 * the document fetched from GET /api/openapi.json (no authentication). A real callback body and
 * its headers are checked against the webhook.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { JsonObject } from '../../src/api/openapi/json.js'
import { RECORD_ENV, startHarness, type RecordedReply } from '../e2e/harness.js'
import { documentChecker } from './validate.js'

t.setTimeout(240_000)

/** The e2e files whose replies are recorded: every operation's 200, and 400, 404, 409, 429 from the engine. */
const E2E_FILES = ['test/e2e/destinations.test.ts', 'test/e2e/groups.test.ts', 'test/e2e/limit.test.ts', 'test/e2e/idempotency.test.ts']
const SETPRIV = '/usr/bin/setpriv'

const dir = mkdtempSync(join(tmpdir(), 'cod-openapi-'))
const recordFile = join(dir, 'replies.jsonl')
const children = new Set<ChildProcess>()
t.teardown(() => {
  for (const c of children) if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

/** Runs one e2e file as its own process (a parent-death signal where setpriv exists); resolves with its exit code and output tail. */
function runE2e(file: string): Promise<{ code: number | null; tail: string }> {
  const args = ['--import', 'tsx', file]
  const [cmd, argv] = existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'KILL', '--', process.execPath, ...args]] : [process.execPath, args]
  const child = spawn(cmd, argv, { env: { ...process.env, [RECORD_ENV]: recordFile }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let out = ''
  const keep = (c: Buffer) => (out = (out + c.toString()).slice(-4000))
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      children.delete(child)
      resolve({ code, tail: out })
    })
  })
}

const readRecords = (): RecordedReply[] =>
  existsSync(recordFile)
    ? readFileSync(recordFile, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as RecordedReply)
    : []

t.test('the end-to-end files pass with recording on', async (t) => {
  // Two at a time: the machine has two cores and the runner has other files going.
  for (let i = 0; i < E2E_FILES.length; i += 2) {
    const batch = E2E_FILES.slice(i, i + 2)
    const results = await Promise.all(batch.map(runE2e))
    results.forEach((r, j) => t.equal(r.code, 0, `${batch[j]} passed`, { tail: r.code === 0 ? undefined : r.tail }))
  }
  t.ok(readRecords().length > 20, `replies recorded: ${readRecords().length}`)
})

t.test('error replies of every kind, the ticket route, GET routes; then every recorded reply matches the served document', async (t) => {
  process.env[RECORD_ENV] = recordFile
  const h = await startHarness()
  t.teardown(async () => {
    delete process.env[RECORD_ENV]
    await h.close()
  })
  const base = h.daemon.baseUrl
  const served = await fetch(`${base}/api/openapi.json`)
  t.equal(served.status, 200, 'the document is served without authentication')
  t.match(served.headers.get('content-type'), /^application\/json/)
  const doc = (await served.json()) as JsonObject
  const check = documentChecker(doc)

  // Provoked here, recorded by the same harness hook.
  const wrong = `Basic ${Buffer.from('example.test:not-the-token-at-all').toString('base64')}`
  t.equal((await h.post('call_user', { user_name: 'alice', destination: 'bob' }, wrong)).status, 401)
  t.equal((await h.post('call_user', { user_name: 'alice' })).status, 400, 'missing destination')
  t.equal((await h.post('call_user', { user_name: 'alice', destination: 'bob', colour: 'red' })).status, 400, 'unknown parameter')
  t.equal((await h.post('call_user', { user_name: 'nobody', destination: 'bob' })).status, 404)
  t.equal((await h.post('call_group', { group_name: 'nogroup', destination: 'bob' })).status, 404)
  t.equal((await h.post('gen_ws_ticket', { uri: '/api/ws_cti?app_name=crm&user_name=alice' })).status, 200)
  t.equal((await h.post('gen_ws_ticket', { uri: '/api/ws_cti?app_name=crm&user_name=nobody' })).status, 404)
  t.equal((await h.post('gen_ws_ticket', { url: 'x' })).status, 400)
  t.equal((await h.post('gen_ws_ticket', { uri: 'x' }, wrong)).status, 401)

  // Replies the harness cannot provoke (a body too large, another content type, another method): checked directly.
  const direct = async (path: string, method: 'get' | 'post', init: RequestInit, docMethod: 'get' | 'post' = method) => {
    const res = await fetch(`${base}${path}`, { ...init, method: method.toUpperCase() })
    const headers: Record<string, string> = {}
    res.headers.forEach((v, k) => (headers[k] = v))
    const text = await res.text()
    const body = (res.headers.get('content-type') ?? '').startsWith('application/json') ? (JSON.parse(text) as unknown) : text
    t.same(check.checkReply(path, docMethod, res.status, headers, body), [], `${method.toUpperCase()} ${path} → ${res.status}`)
    return res.status
  }
  const auth = { authorization: `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}` }
  t.equal(await direct('/api/call_user', 'post', { headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' }), 415)
  // 413: the Content-Length alone is over http.body_limit; the body is never sent (the daemon answers and closes).
  const tooLarge = await new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve, reject) => {
    const req = request(`${base}/api/call_user`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': '600000' } }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, body: JSON.parse(text) as unknown }))
    })
    req.on('error', reject)
    req.flushHeaders()
  })
  t.equal(tooLarge.status, 413)
  t.same(check.checkReply('/api/call_user', 'post', tooLarge.status, tooLarge.headers, tooLarge.body), [], 'POST /api/call_user → 413')
  t.equal(await direct('/api/call_user', 'get', { headers: auth }, 'post'), 405)
  t.equal(await direct('/api/call_user', 'post', { headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'has space' }, body: '{}' }), 400)
  t.equal(await direct('/healthz', 'get', {}), 200)
  t.equal(await direct('/metrics', 'get', {}), 200)
  t.equal(await direct('/api/openapi.json', 'get', {}), 200)

  // A real result callback: body and headers as the receiver got them.
  const placed = await h.post('call_user', { user_name: 'alice', destination: 'bob', callback_url: h.callbackUrl })
  t.equal(placed.status, 200)
  const cb = await h.waitFor('the result callback', () => h.callbacks[0], 15_000)
  t.same(check.checkAt(['components', 'schemas', 'CallbackBody'], cb.body), [], `callback body ${JSON.stringify(cb.body)}`)
  const params = (doc['components'] as JsonObject)['pathItems'] as JsonObject
  const headerParams = ((params['ResultCallback'] as JsonObject)['post'] as JsonObject)['parameters'] as JsonObject[]
  headerParams.forEach((p, i) => {
    const value = cb.headers[String(p['name']).toLowerCase()]
    if (value === undefined) return t.notOk(p['required'], `${String(p['name'])} may be absent`)
    t.same(check.checkAt(['components', 'pathItems', 'ResultCallback', 'post', 'parameters', String(i), 'schema'], value), [], `callback header ${String(p['name'])}`)
  })

  // Last: the throttle's 429 blocks this address for the rest of its window.
  let throttled: { status: number } = { status: 0 }
  for (let i = 0; i < 15 && throttled.status !== 429; i++) throttled = await h.post('call_group', { group_name: 'support', destination: 'bob' }, wrong)
  t.equal(throttled.status, 429, 'too many failed authentications: 429')

  const records = readRecords()
  const seen = new Set<string>()
  let acceptedRequests = 0
  for (const r of records) {
    seen.add(`${r.operation} ${r.status}`)
    const problems = check.checkReply(`/api/${r.operation}`, 'post', r.status, r.headers, r.body)
    if (problems.length > 0) t.fail(`${r.operation} ${r.status} ${JSON.stringify(r.body)}: ${problems.join('; ')}`)
    // The document must not be stricter than the daemon: a request the daemon accepted matches its request schema.
    if (r.status === 200 && r.request !== undefined) {
      const name = `${r.operation.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Request`
      const refused = check.checkAt(['components', 'schemas', name], r.request)
      if (refused.length > 0) t.fail(`${r.operation} request ${JSON.stringify(r.request)} was accepted by the daemon but not by ${name}: ${refused.join('; ')}`)
      else acceptedRequests++
    }
  }
  t.pass(`${records.length} recorded replies checked`)
  t.ok(acceptedRequests >= 10, `${acceptedRequests} accepted requests match their request schema`)
  for (const expected of [
    'call_user 200',
    'call_group 200',
    'call_external 200',
    'initiate_call 200',
    'call_user 400',
    'call_user 401',
    'call_user 404',
    'call_user 409',
    'call_user 429',
    'call_external 400',
    'gen_ws_ticket 200',
    'gen_ws_ticket 400',
    'gen_ws_ticket 404',
    'call_group 429',
  ]) {
    t.ok(seen.has(expected), `a recorded ${expected} was checked`)
  }
})
