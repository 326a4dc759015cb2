/**
 * `POST {prefix}/calls/{uuid}/record` (issue 29 item 2; src/api/calls/record.ts) over HTTP, on the
 * channel model fed by events, CTI's live calls, a real recording store in a temporary folder and
 * the FakePbx recording every command: the recording policy of the leg decides (never refuses
 * start, always refuses stop, on_request allows both; a leg made for a group follows the group's),
 * a second start and a stop with nothing recording are conflicts, another domain's leg is
 * channel_not_found, and the ESL commands are exactly uuid_setvar ×2 then uuid_record with the
 * store's file.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createApp } from '../../src/api/app.js'
import { buildOpenApiDocument } from '../../src/api/openapi/document.js'
import { createChannelModel } from '../../src/channels/index.js'
import type { LoadedConfig } from '../../src/config/load.js'
import { eslCommands } from '../../src/cti/esl.js'
import { createLiveCalls } from '../../src/cti/live-calls.js'
import { RECORDING_ID_RE } from '../../src/recording/id.js'
import { openRecordingStore } from '../../src/recording/store.js'
import { runtimeOf } from '../../src/runtime/store.js'
import { silentLogger } from '../../src/util/logger.js'
import { documentChecker } from '../openapi/validate.js'
import { ev, userLegParked } from '../cti/fixtures.js'
import { FakePbx } from '../support/fake-pbx.js'
import { AUTH_A, AUTH_B, DOMAIN_A, DOMAIN_B, domainB, exampleConfig, isError, RecordingEngine, send } from './helpers.js'

const ALICE = '11111111-1111-4111-8111-111111111111' // domain on_request
const CAROL = '22222222-2222-4222-8222-222222222222' // carol's own policy: never
const SALES = '55555555-5555-4555-8555-555555555555' // a leg made for group sales: always
const ZARA = '33333333-3333-4333-8333-333333333333' // domain B

const base = await exampleConfig()
const [example, ...others] = base.domains
if (example === undefined) throw new Error('no example domain')
const withCarolNever = { ...example, users: example.users.map((u) => (u.name === 'carol' ? { ...u, recording: { mode: 'never' as const } } : u)) }
const config: LoadedConfig = { ...base, domains: [withCarolNever, ...others, domainB] }
const runtime = runtimeOf(config)
const dir = await mkdtemp(join(tmpdir(), 'cod-calls-record-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const opened = await openRecordingStore({ dir, logger: silentLogger(), retentionDaysOf: () => 30 })
if (!opened.ok) throw new Error(opened.error)
const store = opened.value
t.teardown(() => store.close())
const pbx = new FakePbx()
const channels = createChannelModel({ pbx, logger: silentLogger(), directory: () => runtime.directory })
t.teardown(() => channels.close())
const app = createApp({
  runtime: () => runtime,
  engine: new RecordingEngine(),
  health: { isConnected: () => true },
  logger: silentLogger(),
  calls: createLiveCalls({ channels, pbx, commands: eslCommands, logger: silentLogger(), recordings: store }),
})
const server = app.listen(0, '127.0.0.1')
await new Promise<void>((resolve) => server.once('listening', resolve))
t.teardown(() => {
  server.closeAllConnections()
  server.close()
})
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/calls`

await new Promise((resolve) => setImmediate(resolve))
const salesLeg = userLegParked(SALES, DOMAIN_A, '2', 'bob').map((e) => ({ ...e, variable_cod_group_id: '10' }))
pbx.emit(...userLegParked(ALICE, DOMAIN_A, '1', 'alice'), ...userLegParked(CAROL, DOMAIN_A, '3', 'carol'), ...salesLeg, ...userLegParked(ZARA, DOMAIN_B, '71', 'zara'))
for (const uuid of [ALICE, CAROL, SALES, ZARA]) pbx.live.set(uuid, { answered: true, vars: {} })

const check = documentChecker(buildOpenApiDocument({ prefix: '/api' }))
async function record(uuid: string, body: unknown, auth = AUTH_A) {
  const reply = await send(`${url}/${uuid}/record`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const problems = uuid.startsWith('.') ? [] : check.checkReply('/api/calls/{uuid}/record', 'post', reply.status, Object.fromEntries(reply.headers.entries()), reply.body)
  if (problems.length > 0) throw new Error(`reply not as documented: ${problems.join('; ')}`)
  return reply
}
const sentSince = (n: number) => pbx.commands.slice(n)

t.test('on_request: start writes uuid_setvar cod_recording_id, RECORD_STEREO, uuid_record with the store file; stop stops that file', async (t) => {
  const before = pbx.commands.length
  const started = await record(ALICE, { action: 'start' })
  t.equal(started.status, 200)
  const rec = (started.body as { recording: { id: string; status: string; legs: string[]; request_id: string } }).recording
  t.match(rec, { id: RECORDING_ID_RE, status: 'recording', legs: [ALICE], request_id: `req-${ALICE.slice(0, 8)}` })
  const file = join(dir, DOMAIN_A.toLowerCase(), `${rec.id}.wav`)
  t.same(sentSince(before), [`uuid_setvar ${ALICE} cod_recording_id ${rec.id}`, `uuid_setvar ${ALICE} RECORD_STEREO true`, `uuid_record ${ALICE} start ${file}`])
  t.equal(store.get(DOMAIN_A, rec.id)?.status, 'recording', 'the record is in the store before the reply')

  const again = await record(ALICE, { action: 'start' })
  isError(t, again, 409, 'recording_conflict', rec.id)

  const mid = pbx.commands.length
  const stopped = await record(ALICE, { action: 'stop' })
  t.equal(stopped.status, 200)
  t.same(stopped.body, { result_code: 0 })
  t.same(sentSince(mid), [`uuid_record ${ALICE} stop ${file}`])
  // FreeSWITCH's RECORD_STOP completes the record (recording/follow.ts); here the store is told directly.
  await store.fail(rec.id, 'no audio in this test')
  isError(t, await record(ALICE, { action: 'stop' }), 409, 'recording_conflict', 'not being recorded')
})

t.test('a leg whose cod_recording_id names a recording in progress (the dialplan\'s) is being recorded', async (t) => {
  const begun = await store.begin({ id: '0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d', requestId: 'r1', domain: DOMAIN_A, legs: [ALICE], startedAt: Date.now() })
  t.ok(begun.ok)
  pbx.emit(ev('CHANNEL_PARK', ALICE, Date.now(), { ...userLegParked(ALICE, DOMAIN_A, '1', 'alice')[0], 'Event-Name': 'CHANNEL_PARK', variable_cod_recording_id: '0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d' }))
  await new Promise((resolve) => setImmediate(resolve))
  isError(t, await record(ALICE, { action: 'start' }), 409, 'recording_conflict', '0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d')
  const mid = pbx.commands.length
  t.equal((await record(ALICE, { action: 'stop' })).status, 200)
  t.same(sentSince(mid), [`uuid_record ${ALICE} stop ${join(dir, DOMAIN_A.toLowerCase(), '0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d.wav')}`])
  await store.fail('0a3c9a9e-4a2b-4c8e-9d57-1f0e2a6b7c8d', 'test')
})

t.test('never refuses start, always refuses stop; nothing reaches FreeSWITCH', async (t) => {
  const before = pbx.commands.length
  isError(t, await record(CAROL, { action: 'start' }), 403, 'recording_not_allowed', 'user carol is never')
  isError(t, await record(CAROL, { action: 'stop' }), 409, 'recording_conflict', 'not being recorded')
  isError(t, await record(SALES, { action: 'stop' }), 403, 'recording_not_allowed', 'group sales is always')
  t.same(sentSince(before), [])
  const started = await record(SALES, { action: 'start' })
  t.equal(started.status, 200, 'always: a start is allowed (here nothing recorded the leg yet)')
})

t.test('bad action, missing action, another domain, a gone leg: refused with nothing sent', async (t) => {
  const before = pbx.commands.length
  isError(t, await record(ALICE, { action: 'pause' }), 400, 'invalid_parameter', 'action')
  isError(t, await record(ALICE, { action: 'start', path: '/etc/passwd' }), 400, 'invalid_parameter')
  isError(t, await record(ALICE, {}), 400, 'missing_parameter', 'action')
  isError(t, await record(ZARA, { action: 'start' }), 404, 'channel_not_found')
  isError(t, await record(ALICE, { action: 'start' }, AUTH_B), 404, 'channel_not_found')
  isError(t, await record('../../etc', { action: 'start' }), 404, 'not_found')
  isError(t, await record('44444444-4444-4444-8444-444444444444', { action: 'start' }), 404, 'channel_not_found')
  t.same(sentSince(before), [])
})

t.test('FreeSWITCH refusing uuid_record: command_failed, the record failed with its answer', async (t) => {
  pbx.reply = (c) => ({ ok: true, value: c.startsWith('uuid_record') ? '-ERR Cannot execute record session!\n' : '+OK\n' })
  t.teardown(() => (pbx.reply = undefined))
  const r = await record(ALICE, { action: 'start' })
  isError(t, r, 502, 'command_failed', 'Cannot execute record session')
  const id = /uuid_setvar \S+ cod_recording_id (\S+)/.exec(pbx.commands.filter((c) => c.includes('cod_recording_id')).at(-1) ?? '')?.[1] ?? ''
  t.match(store.get(DOMAIN_A, id), { status: 'failed', reason: /Cannot execute record session/ })
  pbx.reply = undefined
  t.equal((await record(ALICE, { action: 'start' })).status, 200, 'the failed one is not in the way')
})
