/**
 * The recording follower (src/recording/follow.ts) fed the events the real FreeSWITCH 1.10.12 sent
 * (test/fixtures/freeswitch/esl/28-30), with the daemon's own channel variables added to the
 * recorded leg's events as its originate stamps them (the captures ran FreeSWITCH's inline
 * dialplan, without the daemon's cod_* variables). A real store in a temporary folder.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { followRecordings, type RecordingEvent } from '../../src/recording/follow.js'
import { newRecordingId } from '../../src/recording/id.js'
import { openRecordingStore } from '../../src/recording/store.js'
import { readEventJson } from '../../src/pbx/event-json.js'
import { silentLogger } from '../../src/util/logger.js'
import { capturedEvents } from '../sim/captured-events.js'
import { waitFor } from '../support/wait.js'
import { wavBytes } from './wav.js'

const DOMAIN = 'example.test'

async function world(t: Test) {
  const root = t.testdir()
  const opened = await openRecordingStore({ dir: root, logger: silentLogger(), retentionDaysOf: () => 30 })
  if (!opened.ok) throw new Error(opened.error)
  const store = opened.value
  t.teardown(() => store.close())
  const listeners = new Set<(e: RecordingEvent) => void>()
  const accepted = new Set<(a: { plan: { requestId: string; domain: string; recording?: { id: string; callbackUrl?: string } } }) => void>()
  const notices: Array<{ url: string; body: string; kind: string }> = []
  const follower = followRecordings({
    store,
    onEvent: (l) => (listeners.add(l), () => listeners.delete(l)),
    onAccepted: (l) => (accepted.add(l), () => accepted.delete(l)),
    domainCallbackUrl: () => 'https://domain.example/recordings',
    notify: (_d, url, body, meta) => notices.push({ url, body, kind: meta.kind }),
    logger: silentLogger(),
  })
  t.teardown(() => follower.close())
  return {
    root,
    store,
    follower,
    notices,
    accept: (requestId: string, id: string, callbackUrl?: string) => {
      for (const l of accepted) l({ plan: { requestId, domain: DOMAIN, recording: { id, ...(callbackUrl !== undefined ? { callbackUrl } : {}) } } })
    },
    emit: (e: RecordingEvent) => {
      for (const l of listeners) l(e)
    },
  }
}

/** The capture's events of its recorded leg (the one RECORD_* names), stamped with the daemon's variables. */
function recordedLeg(fixture: string, leg: string | undefined, id: string): RecordingEvent[] {
  const events = capturedEvents(fixture)
  const a = leg ?? events.find((e) => e['Event-Name'] === 'RECORD_START' || e['Event-Name'] === 'RECORD_STOP')?.['Unique-ID']
  return events
    .filter((e) => e['Unique-ID'] === a)
    .map((e) => ({ ...e, variable_cod_recording_id: id, variable_cod_domain: DOMAIN, variable_cod_request_id: 'req-1' }))
}

t.test('a recorded bridge (esl/28): recording at RECORD_START, completed at RECORD_STOP with record_ms and both legs; the request\'s callback', async (t) => {
  const w = await world(t)
  const id = newRecordingId()
  w.accept('req-1', id, 'https://app.example/rec')
  const events = recordedLeg('28-record-session-bridge.txt', undefined, id)
  const start = events.find((e) => e['Event-Name'] === 'RECORD_START')
  const stop = events.find((e) => e['Event-Name'] === 'RECORD_STOP')
  if (start === undefined || stop === undefined) return t.fail('the capture has both events')
  w.emit(start)
  await waitFor('the record', () => w.store.get(DOMAIN, id) !== undefined)
  t.equal(w.store.get(DOMAIN, id)?.status, 'recording')
  // FreeSWITCH wrote the file meanwhile (here: a WAV of the capture's length).
  mkdirSync(join(w.root, DOMAIN), { recursive: true })
  writeFileSync(join(w.root, DOMAIN, `${id}.wav`), wavBytes(3080))
  for (const e of events.slice(events.indexOf(start) + 1)) w.emit(e)
  await waitFor('the notice', () => w.notices.length === 1)
  const r = w.store.get(DOMAIN, id)
  t.equal(r?.status, 'completed')
  t.equal(r?.durationMs, 3080, "FreeSWITCH's own record_ms")
  t.same(r?.legs, [stop['Unique-ID'], stop['variable_bridge_uuid']], 'the recorded leg and the other party')
  t.equal(w.notices[0]?.url, 'https://app.example/rec', "the request's recording_callback_url")
  t.match(JSON.parse(w.notices[0]?.body ?? '{}'), { event: 'recording.completed', recording: { id, request_id: 'req-1', status: 'completed', duration_ms: 3080 } })
})

t.test('a write FreeSWITCH refused (esl/29): no RECORD_* event; the hangup\'s uri-failure makes it failed; the domain\'s callback', async (t) => {
  const w = await world(t)
  const id = newRecordingId()
  const events = capturedEvents('29-record-session-unwritable.txt')
  const hangup = events.find((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['variable_record_completion_cause'] === 'uri-failure')
  if (hangup === undefined) return t.fail('the capture has the hangup with uri-failure')
  t.notOk(events.some((e) => String(e['Event-Name']).startsWith('RECORD_')), 'FreeSWITCH said nothing else')
  // Read as the daemon reads it off the socket (channel events keep only the headers it reads).
  const asRead = readEventJson(Buffer.from(JSON.stringify({ ...hangup, variable_cod_recording_id: id, variable_cod_domain: DOMAIN, variable_cod_request_id: 'req-2' })))
  t.equal(asRead?.['variable_record_completion_cause'], 'uri-failure', 'the daemon keeps the header that tells')
  w.emit(asRead ?? {})
  await waitFor('the notice', () => w.notices.length === 1)
  t.match(w.store.get(DOMAIN, id), { status: 'failed', reason: /could not write the recording file/ })
  t.equal(w.notices[0]?.url, 'https://domain.example/recordings', "no request's URL known: the domain's")
})

t.test('a bridge that never connected (esl/30): empty-file, FreeSWITCH deleted the file: no recording is kept or told', async (t) => {
  const w = await world(t)
  const id = newRecordingId()
  w.accept('req-3', id, 'https://app.example/rec')
  for (const e of recordedLeg('30-record-session-bridge-fails.txt', undefined, id)) w.emit(e)
  await waitFor('the record gone again', () => w.store.get(DOMAIN, id) === undefined && w.store.stats().started === 1)
  await new Promise((r) => setImmediate(r))
  t.same(w.notices, [])
})

t.test('events without a recording id of ours, or with a hostile one, are ignored', async (t) => {
  const w = await world(t)
  const stop = capturedEvents('28-record-session-bridge.txt').find((e) => e['Event-Name'] === 'RECORD_STOP')
  for (const id of [undefined, '../../etc/passwd', 'ABCDEF00-0000-4000-8000-000000000000', `${newRecordingId()}\n`]) {
    w.emit({ ...stop, ...(id !== undefined ? { variable_cod_recording_id: id } : {}), variable_cod_domain: DOMAIN, variable_cod_request_id: 'r' })
  }
  w.follower.refused(DOMAIN, '../x', 'no')
  await new Promise((r) => setTimeout(r, 50))
  t.equal(w.store.stats().started, 0)
  t.same(w.notices, [])
})

t.test('an IVR <Record> on a recorded leg (its own file, esl/40) is not the call\'s recording', async (t) => {
  const w = await world(t)
  const id = newRecordingId()
  const other = newRecordingId()
  w.accept('req-5', id, 'https://app.example/rec')
  for (const e of recordedLeg('28-record-session-bridge.txt', undefined, id)) {
    if (e['Event-Name'] === 'RECORD_START' || e['Event-Name'] === 'RECORD_STOP') w.emit({ ...e, 'Record-File-Path': `/var/lib/cod/recordings/${DOMAIN}/${other}.wav` })
  }
  await new Promise((r) => setTimeout(r, 50))
  t.equal(w.store.stats().started, 0, 'no record began')
  t.same(w.notices, [], 'nothing told')
})
