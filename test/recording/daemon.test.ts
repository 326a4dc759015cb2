/**
 * The recordings part of the daemon (src/daemon.ts): its folder is made at start (inside a test's
 * own journal folder), what an earlier run left is read back and past-retention records are
 * swept before the API serves, the routes answer with the domain's token, the metrics count.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startDaemon } from '../../src/daemon.js'
import { newRecordingId } from '../../src/recording/id.js'
import { silentLogger } from '../../src/util/logger.js'
import { wavBytes } from './wav.js'

const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`
const DAY = 86_400_000

t.test('the daemon opens the store, sweeps it, serves it and counts it', async (t) => {
  const journalDir = mkdtempSync(join(tmpdir(), 'cod-rec-daemon-'))
  t.teardown(() => rmSync(journalDir, { recursive: true, force: true }))
  const folder = join(journalDir, 'recordings', 'example.test')
  mkdirSync(folder, { recursive: true })
  const record = (id: string, startedAt: number) => ({ id, requestId: 'r', domain: 'example.test', legs: ['a'], startedAt: new Date(startedAt).toISOString(), durationMs: 500, bytes: 4044, format: 'wav', status: 'completed' })
  const kept = newRecordingId()
  const old = newRecordingId()
  writeFileSync(join(folder, `${kept}.json`), JSON.stringify(record(kept, Date.now() - DAY)))
  writeFileSync(join(folder, `${kept}.wav`), wavBytes(500))
  writeFileSync(join(folder, `${old}.json`), JSON.stringify(record(old, Date.now() - 31 * DAY)))
  writeFileSync(join(folder, `${old}.wav`), wavBytes(500))

  const started = await startDaemon({ configFile: 'conf/daemon.yaml', logger: silentLogger(), httpPort: 0, simulatorPort: 0, journalDir })
  if (!started.ok) return t.fail(started.error.join('\n'))
  const daemon = started.value
  t.teardown(() => daemon.stop())
  t.notOk(existsSync(join(folder, `${old}.json`)), 'a 31-day-old recording of a 30-day domain went at start')
  t.notOk(existsSync(join(folder, `${old}.wav`)))
  const list = (await (await fetch(`${daemon.baseUrl}/api/recordings`, { headers: { authorization: AUTH } })).json()) as { recordings: Array<{ id: string }> }
  t.same(list.recordings.map((r) => r.id), [kept], "read back: the earlier run's recording")
  const audio = await fetch(`${daemon.baseUrl}/api/recordings/${kept}/audio`, { headers: { authorization: AUTH, range: 'bytes=0-3' } })
  t.equal(audio.status, 206)
  t.equal(Buffer.from(await audio.arrayBuffer()).toString('latin1'), 'RIFF')
  const metrics = await (await fetch(`${daemon.baseUrl}/metrics`)).text()
  t.match(metrics, /^cod_recordings_on_disk 1$/m)
  const doc = (await (await fetch(`${daemon.baseUrl}/api/openapi.json`)).json()) as { paths: Record<string, unknown> }
  t.ok(doc.paths['/api/recordings/{id}/audio'], 'in the OpenAPI document')
})

t.test('a recording folder that cannot be made stops the start, naming recording.dir', async (t) => {
  const journalDir = mkdtempSync(join(tmpdir(), 'cod-rec-daemon-'))
  t.teardown(() => rmSync(journalDir, { recursive: true, force: true }))
  writeFileSync(join(journalDir, 'blocker'), 'a file where a folder should be')
  const started = await startDaemon({ configFile: 'conf/daemon.yaml', logger: silentLogger(), httpPort: 0, simulatorPort: 0, journalDir, recordingDir: join(journalDir, 'blocker', 'recordings') })
  if (started.ok) {
    await started.value.stop()
    return t.fail('started')
  }
  t.match(started.error.join('\n'), /recording\.dir: .*blocker.* is a file, not a folder/)
})
