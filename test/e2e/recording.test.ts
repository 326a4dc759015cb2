/**
 * Recorded calls end to end on the built-in simulator (it records as FreeSWITCH 1.10.12 does:
 * test/fixtures/freeswitch/esl/28-32): a call made for the `sales` group (recording `always`) and
 * a call_user that asks `"record": true` (the domain is `on_request`) each leave a completed WAV
 * in the store, fetched through the API byte for byte, with its record POSTed to the
 * recording_callback_url as a signed notice; a call that is not recorded leaves nothing; a
 * refused write ends the recording `failed` while the call goes on.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { verifySignature } from '../../src/callbacks/body.js'
import type { Daemon } from '../../src/daemon.js'
import { documentChecker } from '../openapi/validate.js'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`
const SECRET = 'example-signing-secret'

interface Received {
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

async function receiver(t: { teardown(fn: () => unknown): void }): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      got.push({ headers: req.headers, body })
      res.end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rec`, got }
}

const post = async (base: string, op: string, body: unknown) => {
  const res = await fetch(`${base}/api/${op}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const get = async (base: string, path: string) => {
  const res = await fetch(`${base}${path}`, { headers: { authorization: AUTH } })
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}

/** A recordings folder of the test's own, removed at its end. */
const ownFolder = (t: { teardown(fn: () => unknown): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-rec-calls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Ends every bridged call from the far side, once `n` originating legs are bridged (the simulator's view). */
async function hangUpWhenBridged(daemon: Daemon, n: number): Promise<void> {
  const sim = daemon.simulator
  if (sim === undefined) throw new Error('simulator mode expected')
  const bridged = () => sim.liveChannels().filter((c) => c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined)
  await waitFor(`${n} bridged calls`, () => bridged().length >= n, 15_000)
  // A moment of conversation to record.
  await new Promise((r) => setTimeout(r, 300))
  for (const c of bridged()) sim.remoteHangup(c.uuid)
}

type Recording = { id: string; request_id: string; status: string; bytes: number; duration_ms: number | null; legs: string[]; reason?: string }

t.test('recorded calls: the group that always records, a request that asks; the WAV through the API; the notice', async (t) => {
  const rx = await receiver(t)
  // The simulator at 5x: alice answers after 1 s, bob after 2 s; callbacks may reach this host.
  const recordingDir = ownFolder(t)
  const daemon = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.2, recordingDir })
  const base = daemon.baseUrl

  const forGroup = await post(base, 'call_user', { user_name: 'alice', destination: 'bob', group_name: 'sales', recording_callback_url: rx.url })
  t.equal(forGroup.status, 200, JSON.stringify(forGroup.body))
  const asked = await post(base, 'call_user', { user_name: 'alice', destination: 'bob', record: true, recording_callback_url: rx.url })
  t.equal(asked.status, 200, JSON.stringify(asked.body))
  const plain = await post(base, 'call_user', { user_name: 'alice', destination: 'bob', recording_callback_url: rx.url })
  t.equal(plain.status, 200)

  // Each call is hung up a moment after it was connected (the bridge), from the far side.
  await hangUpWhenBridged(daemon, 3)

  await waitFor('two recording notices', () => rx.got.length >= 2, 15_000)
  const notices = rx.got.map((g) => ({ g, n: JSON.parse(g.body) as { event: string; recording: Recording } }))
  t.same(new Set(notices.map((x) => x.n.event)), new Set(['recording.completed']), 'both completed')
  const nowSec = Math.floor(Date.now() / 1000)
  for (const { g, n } of notices) {
    t.equal(g.headers['x-cod-notice'], 'recording')
    t.ok(verifySignature(SECRET, String(g.headers['x-signature']), g.body, { nowSec }), 'signed with the domain secret')
    t.equal(n.recording.legs.length, 2, 'both parties\' legs')
    t.ok((n.recording.duration_ms ?? 0) > 0, `a duration (${n.recording.duration_ms} ms)`)
    const one = await get(base, `/api/recordings/${n.recording.id}`)
    t.equal(one.status, 200)
    const audio = await get(base, `/api/recordings/${n.recording.id}/audio`)
    t.equal(audio.status, 200)
    t.equal(audio.bytes.subarray(0, 4).toString('latin1'), 'RIFF')
    t.equal(audio.bytes.length, n.recording.bytes, 'the API serves the whole file')
    const file = readFileSync(join(recordingDir, 'example.test', `${n.recording.id}.wav`))
    t.ok(file.equals(audio.bytes), 'byte-identical to the file on disk')
    t.equal(file.readUInt16LE(22), 2, 'stereo: one party per channel')
  }
  const doc = documentChecker((await (await fetch(`${base}/api/openapi.json`)).json()) as Parameters<typeof documentChecker>[0])
  for (const { n } of notices) t.same(doc.checkAt(['components', 'schemas', 'RecordingNotice'], n), [], 'the notice is as documented')
  const recordedRequests = new Set(notices.map((x) => x.n.recording.request_id))
  t.equal(recordedRequests.size, 2, 'one recording per recorded request')
  const list = (await (await fetch(`${base}/api/recordings`, { headers: { authorization: AUTH } })).json()) as { recordings: Recording[] }
  t.equal(list.recordings.length, 2, 'the call nobody asked to record left nothing')
})

t.test('a recording that cannot be armed ends failed, with the reason, and the call goes on', async (t) => {
  const rx = await receiver(t)
  const recordingDir = ownFolder(t)
  const daemon = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.2, recordingDir })
  // The domain's folder cannot be made: a file stands where it should be (holds for root too).
  writeFileSync(join(recordingDir, 'example.test'), 'not a folder')
  const r = await post(daemon.baseUrl, 'call_user', { user_name: 'alice', destination: 'bob', record: true, recording_callback_url: rx.url })
  t.equal(r.status, 200)
  await hangUpWhenBridged(daemon, 1)
  await waitFor('the notice', () => rx.got.length >= 1, 15_000)
  const n = JSON.parse(rx.got[0]?.body ?? '{}') as { event: string; recording: Recording }
  t.equal(n.event, 'recording.failed')
  t.match(n.recording.reason, /could not arm the recording/)
  t.equal(n.recording.request_id, r.body['request_id'] ?? n.recording.request_id)
})
