/**
 * Idempotency-Key through the whole daemon on the simulator (issue 11 item 5): a repeat places
 * no second call (the simulator's own originates and channels are counted), and the key
 * survives a daemon restart on the same journal folder.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import type { Daemon } from '../../src/daemon.js'
import { startTestDaemon } from '../support/daemon.js'
import { DEMO_AUTH, recordReply } from './harness.js'

/** A daemon on `journalDir`, which outlives it: the second run reads what the first wrote. */
const start = (journalDir: string): Promise<Daemon> => startTestDaemon(undefined, { simulatorPort: 0, simulatorTimeScale: 0.05, journalDir })

const post = async (d: Daemon, body: unknown, key: string) => {
  const res = await fetch(`${d.baseUrl}/api/call_user`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: DEMO_AUTH, 'idempotency-key': key },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  recordReply('call_user', res, JSON.parse(text), body)
  return { status: res.status, text, replayed: res.headers.get('idempotent-replayed') }
}

const originates = (d: Daemon) => d.simulator?.commands.filter((c) => /^(bg)?api originate /.test(c.text)).length ?? 0

t.test('same key twice: one originate; another body: 409; after a restart: the same reply, nothing placed', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cod-e2e-idem-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const call = { user_name: 'bob', destination: '0399990000' }

  const before = await start(dir)
  let stopped = false
  t.teardown(async () => {
    if (!stopped) await before.stop()
  })
  const first = await post(before, call, 'e2e-key-1')
  t.equal(first.status, 200, first.text)
  const again = await post(before, call, 'e2e-key-1')
  t.equal(again.status, 200)
  t.equal(again.text, first.text, 'the same UUIDs')
  t.equal(again.replayed, 'true')
  t.equal((await post(before, { ...call, destination: '0399990001' }, 'e2e-key-1')).status, 409)
  t.equal((await post(before, call, 'bad key')).status, 400)
  await new Promise((r) => setTimeout(r, 300))
  t.equal(originates(before), 1, 'FreeSWITCH got one originate')
  const uuid = (JSON.parse(first.text) as { uuids: string[] }).uuids[0]
  t.equal(before.simulator?.liveChannels().filter((c) => c.variables['cod_request_id'] !== undefined && c.uuid === uuid).length, 1, 'one call, live')
  await before.stop()
  stopped = true

  const after = await start(dir)
  t.teardown(() => after.stop())
  const replay = await post(after, call, 'e2e-key-1')
  t.equal(replay.status, 200)
  t.equal(replay.text, first.text, 'the reply of before the restart')
  t.equal(replay.replayed, 'true')
  t.equal((await post(after, { ...call, destination: '0399990001' }, 'e2e-key-1')).status, 409, 'another body still conflicts')
  await new Promise((r) => setTimeout(r, 300))
  t.equal(originates(after), 0, 'nothing placed after the restart')
})
