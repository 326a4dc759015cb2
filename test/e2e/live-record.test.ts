/**
 * The live calls' record command end to end on the simulator (which models uuid_record as
 * FreeSWITCH 1.10.12 does: test/fixtures/freeswitch/esl/48-uuid-record.txt): a bridged call_user
 * (nobody asked to record it; the domain is on_request) is started, talks, is stopped over HTTP,
 * and leaves a completed stereo WAV with a duration, served by the recordings API byte for byte.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`

type Recording = { id: string; status: string; bytes: number; duration_ms: number | null; legs: string[] }

t.test('start, talk, stop: a completed WAV through the recordings API', async (t) => {
  const recordingDir = mkdtempSync(join(tmpdir(), 'cod-live-record-'))
  t.teardown(() => rmSync(recordingDir, { recursive: true, force: true }))
  const daemon = await startTestDaemon(t, { simulatorPort: 0, simulatorTimeScale: 0.2, recordingDir })
  const base = daemon.baseUrl
  const sim = daemon.simulator
  if (sim === undefined) throw new Error('simulator mode expected')
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { authorization: AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const placed = await send('POST', '/api/call_user', { user_name: 'alice', destination: 'bob' })
  t.equal(placed.status, 200, JSON.stringify(placed.body))
  const bridged = () => sim.liveChannels().find((c) => c.variables['cod_role'] === 'originator' && c.bridgedTo !== undefined)
  await waitFor('a bridged call', () => bridged() !== undefined, 15_000)
  const leg = bridged()?.uuid ?? ''

  const started = await send('POST', `/api/calls/${leg}/record`, { action: 'start' })
  t.equal(started.status, 200, JSON.stringify(started.body))
  const rec = started.body['recording'] as Recording
  t.equal(rec.status, 'recording')
  t.equal((await send('POST', `/api/calls/${leg}/record`, { action: 'start' })).status, 409, 'a second start is a conflict')
  await new Promise((r) => setTimeout(r, 600)) // talk
  const stopped = await send('POST', `/api/calls/${leg}/record`, { action: 'stop' })
  t.same(stopped, { status: 200, body: { result_code: 0 } })

  let done: Recording | undefined
  await waitFor('the recording completed', async () => {
    const r = await send('GET', `/api/recordings/${rec.id}`)
    done = r.body['recording'] as Recording
    return done.status === 'completed'
  }, 15_000)
  t.ok((done?.duration_ms ?? 0) >= 400, `a duration (${done?.duration_ms} ms)`)
  t.equal(done?.legs.length, 2, "both parties' legs")
  const audio = Buffer.from(await (await fetch(`${base}/api/recordings/${rec.id}/audio`, { headers: { authorization: AUTH } })).arrayBuffer())
  t.equal(audio.subarray(0, 4).toString('latin1'), 'RIFF')
  t.ok(readFileSync(join(recordingDir, 'example.test', `${rec.id}.wav`)).equals(audio), 'byte-identical to the file')
  t.equal(audio.readUInt16LE(22), 2, 'stereo')
  t.equal((await send('POST', `/api/calls/${leg}/record`, { action: 'stop' })).status, 409, 'nothing left to stop')
  sim.remoteHangup(leg)
})
