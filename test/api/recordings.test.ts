/**
 * The recordings routes (src/api/recordings/) over HTTP, on a real store in a folder of the
 * test's own: list, record, audio with ranges, delete; another domain's id, hostile ids and
 * ranges answer as the issue says, and nothing outside recording.dir is ever read.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Socket } from 'node:net'
import t from 'tap'
import { newRecordingId } from '../../src/recording/id.js'
import { openRecordingStore, type RecordingStore } from '../../src/recording/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { wavBytes } from '../recording/wav.js'
import { AUTH_A, AUTH_B, DOMAIN_A, isError, send, startApp } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'cod-api-recordings-'))
const outside = mkdtempSync(join(tmpdir(), 'cod-api-outside-'))
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})
writeFileSync(join(outside, 'secret.wav'), 'SECRET')

const opened = await openRecordingStore({ dir, logger: silentLogger(), retentionDaysOf: () => 30 })
if (!opened.ok) throw new Error(opened.error)
const store: RecordingStore = opened.value
t.teardown(() => store.close())
const h = await startApp({ recordings: store })
t.teardown(() => h.close())

const AUDIO = wavBytes(1000)
async function recorded(domain = DOMAIN_A, startedAt = Date.now()): Promise<string> {
  const id = newRecordingId()
  const begun = await store.begin({ id, requestId: 'req-x', domain, legs: ['a', 'b'], startedAt })
  if (!begun.ok) throw new Error(begun.error)
  const file = store.recordingFile(domain, id)
  if (!file.ok) throw new Error(file.error)
  writeFileSync(file.value, AUDIO)
  await store.complete(id)
  return id
}

const get = (path: string, auth: string | null = AUTH_A, headers: Record<string, string> = {}) =>
  send(`${h.base}/api/recordings${path}`, { headers: { ...(auth !== null ? { authorization: auth } : {}), ...headers } })

async function audio(id: string, range?: string) {
  const res = await fetch(`${h.base}/api/recordings/${id}/audio`, { headers: { authorization: AUTH_A, ...(range !== undefined ? { range } : {}) } })
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
}

/** The raw path as written, not normalised by a client (`/../`, `%2e%2e`). */
function rawGet(path: string): Promise<string> {
  const { port } = new URL(h.base)
  return new Promise((resolve, reject) => {
    const socket = new Socket()
    let reply = ''
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')))
    socket.on('end', () => resolve(reply))
    socket.on('error', reject)
    socket.connect(Number(port), '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH_A}\r\nConnection: close\r\n\r\n`))
  })
}

t.test('a record and the list, in the API\'s words', async (t) => {
  const id = await recorded()
  const one = await get(`/${id}`)
  t.equal(one.status, 200)
  t.same(one.body, {
    result_code: 0,
    recording: { id, request_id: 'req-x', domain: DOMAIN_A, legs: ['a', 'b'], started_at: (one.body.recording as { started_at: string }).started_at, duration_ms: 1000, bytes: AUDIO.length, format: 'wav', status: 'completed' },
  })
  const list = await get('?limit=100')
  t.equal(list.status, 200)
  t.equal(list.body.result_code, 0)
  t.ok((list.body.recordings as Array<{ id: string }>).some((r) => r.id === id))
  t.equal(list.body.next, null, 'one page: next is null')
  t.equal(list.headers.get('cache-control'), 'no-store')
})

t.test('pages newest first, by next', async (t) => {
  const base = Date.now() - 3_600_000
  const ids = [await recorded(DOMAIN_A, base + 1), await recorded(DOMAIN_A, base + 2), await recorded(DOMAIN_A, base + 3)]
  const first = await get('?limit=1')
  t.equal((first.body.recordings as unknown[]).length, 1)
  const seen: string[] = []
  let next: unknown = null
  let query = '?limit=2'
  for (let i = 0; i < 50; i++) {
    const page = await get(query)
    t.equal(page.status, 200)
    seen.push(...(page.body.recordings as Array<{ id: string }>).map((r) => r.id))
    next = page.body.next
    if (next === null) break
    query = `?limit=2&after=${encodeURIComponent(String(next))}`
  }
  const oldestThree = seen.slice(-3)
  t.same(oldestThree, [...ids].reverse(), 'the three oldest last, newest first')
  t.equal(new Set(seen).size, seen.length, 'none repeated')
})

t.test('bad queries: 400 invalid_parameter naming the parameter', async (t) => {
  for (const q of ['?limit=0', '?limit=101', '?limit=abc', '?limit=1e2', '?limit=99999999999999999999', '?limit=1&limit=2', '?after=nope', '?after=../../etc', '?colour=red']) {
    isError(t, await get(q), 400, 'invalid_parameter')
  }
  isError(t, await get('?limit=0'), 400, 'invalid_parameter', 'limit')
  isError(t, await get('?colour=red'), 400, 'invalid_parameter', 'colour')
})

t.test('another domain\'s recording answers exactly as a missing one', async (t) => {
  const id = await recorded()
  const missing = newRecordingId()
  for (const [path, method] of [[`/${id}`, 'GET'], [`/${id}/audio`, 'GET'], [`/${id}`, 'DELETE']] as const) {
    const theirs = await send(`${h.base}/api/recordings${path}`, { method, headers: { authorization: AUTH_B } })
    const none = await send(`${h.base}/api/recordings${path.replace(id, missing)}`, { method, headers: { authorization: AUTH_B } })
    isError(t, theirs, 404, 'recording_not_found')
    t.same(theirs.body, JSON.parse(none.text.replace(missing, id)) as unknown, `${method} ${path}: the same reply, id aside`)
  }
  t.equal((await get(`/${id}`)).status, 200, 'still there for its own domain')
  t.notOk(((await get('?limit=100', AUTH_B)).body.recordings as Array<{ id: string }>).some((r) => r.id === id), 'not in the other list')
})

t.test('credentials: 401 with a challenge on every route', async (t) => {
  const id = await recorded()
  for (const path of ['', `/${id}`, `/${id}/audio`]) {
    const r = await get(path, null)
    isError(t, r, 401, 'unauthorized')
    t.match(r.headers.get('www-authenticate'), /^Basic /)
  }
})

t.test('the audio: whole, one range, suffix, open-ended; beyond the end 416; several ranges: whole', async (t) => {
  const id = await recorded()
  const size = AUDIO.length
  const whole = await audio(id)
  t.equal(whole.status, 200)
  t.equal(whole.headers.get('content-type'), 'audio/wav')
  t.equal(whole.headers.get('content-length'), String(size))
  t.equal(whole.headers.get('accept-ranges'), 'bytes')
  t.ok(whole.bytes.equals(AUDIO), 'byte-identical to the file')
  const cases: Array<[string, number, number]> = [
    ['bytes=0-43', 0, 43],
    ['bytes=100-', 100, size - 1],
    ['bytes=-10', size - 10, size - 1],
    ['bytes=10-99999999', 10, size - 1],
    [`bytes=-${size * 10}`, 0, size - 1],
    ['bytes=5-5', 5, 5],
    ['bytes=0-999999999999999999999999999999', 0, size - 1],
  ]
  for (const [range, start, end] of cases) {
    const r = await audio(id, range)
    t.equal(r.status, 206, range)
    t.equal(r.headers.get('content-range'), `bytes ${start}-${end}/${size}`, range)
    t.equal(r.headers.get('content-length'), String(end - start + 1))
    t.ok(r.bytes.equals(AUDIO.subarray(start, end + 1)), `${range}: those bytes`)
  }
  for (const range of [`bytes=${size}-`, `bytes=${size + 5}-${size + 9}`, 'bytes=-0', 'bytes=99999999999999999999999999-']) {
    const r = await audio(id, range)
    t.equal(r.status, 416, range)
    t.equal(r.headers.get('content-range'), `bytes */${size}`)
    t.equal((JSON.parse(r.bytes.toString()) as { error: { id: string } }).error.id, 'range_not_satisfiable')
  }
  for (const range of ['bytes=0-1,5-6', 'items=0-1', 'bytes=5-2', 'bytes=abc', 'bytes=-', 'bytes=1.5-2']) {
    const r = await audio(id, range)
    t.equal(r.status, 200, `${range}: the whole file`)
    t.ok(r.bytes.equals(AUDIO))
  }
})

t.test('hostile ids: 404 recording_not_found, nothing read outside the folder', async (t) => {
  // A recording of the domain whose audio was replaced by a link to a file outside.
  const linked = await recorded()
  rmSync(join(dir, DOMAIN_A, `${linked}.wav`))
  symlinkSync(join(outside, 'secret.wav'), join(dir, DOMAIN_A, `${linked}.wav`))
  isError(t, await get(`/${linked}/audio`), 404, 'recording_not_found')
  const hostile = ['..', '%2e%2e', '..%2f..%2fsecret', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', '%00', 'x'.repeat(1000), '%C3%BC', encodeURIComponent(join(outside, 'secret.wav')), `${newRecordingId()}%00`]
  for (const id of hostile) {
    for (const suffix of ['', '/audio']) {
      const r = await get(`/${id}${suffix}`)
      t.equal(r.status, 404, `${id.slice(0, 30)}${suffix}`)
      t.notOk(r.text.includes('SECRET'))
    }
    const del = await send(`${h.base}/api/recordings/${id}`, { method: 'DELETE', headers: { authorization: AUTH_A } })
    t.equal(del.status, 404)
  }
  for (const raw of ['/api/recordings/../../../etc/passwd', '/api/recordings/%2e%2e/%2e%2e/audio', `/api/recordings/${linked}/../../audio`]) {
    const reply = await rawGet(raw)
    t.match(reply, /^HTTP\/1\.1 (404|400) /, raw)
    t.notOk(reply.includes('SECRET') || reply.includes('root:'), `${raw}: nothing from outside`)
  }
  t.equal(readFileSync(join(outside, 'secret.wav'), 'utf8'), 'SECRET')
})

t.test('delete: audio and record gone; a second delete is a missing one', async (t) => {
  const id = await recorded()
  const r = await send(`${h.base}/api/recordings/${id}`, { method: 'DELETE', headers: { authorization: AUTH_A } })
  t.equal(r.status, 200)
  t.same(r.body, { result_code: 0 })
  isError(t, await get(`/${id}`), 404, 'recording_not_found')
  isError(t, await get(`/${id}/audio`), 404, 'recording_not_found')
  isError(t, await send(`${h.base}/api/recordings/${id}`, { method: 'DELETE', headers: { authorization: AUTH_A } }), 404, 'recording_not_found')
})

t.test('a recording still running has no audio yet; other methods are 405', async (t) => {
  const id = newRecordingId()
  await store.begin({ id, requestId: 'r', domain: DOMAIN_A, legs: [], startedAt: Date.now() })
  t.equal((await get(`/${id}`)).body.recording !== undefined, true)
  isError(t, await get(`/${id}/audio`), 404, 'recording_not_found')
  const put = await send(`${h.base}/api/recordings/${id}`, { method: 'PUT', headers: { authorization: AUTH_A } })
  isError(t, put, 405, 'method_not_allowed')
})
