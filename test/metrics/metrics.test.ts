/**
 * src/metrics/ on its own, with sources the test controls: one registry per daemon (two at once
 * do not collide), values read at scrape time, counters that follow totals kept elsewhere,
 * labels bounded (unknown domains folded, paths never a label), sampled event lag, reconnects,
 * the IVR fetch decorator.
 */
import t, { type Test } from 'tap'
import { countingFetcher, createMetrics, type CallbackFigures, type DaemonMetrics, type JournalFigures, type MetricSources, type RecordingFigures } from '../../src/metrics/index.js'
import { OTHER_DOMAIN, routeLabel } from '../../src/metrics/labels.js'
import type { IvrFetcher } from '../../src/ivr/fetch/types.js'
import { fetchError } from '../../src/ivr/fetch/errors.js'
import { err, ok } from '../../src/util/result.js'
import { valueOf } from './expected.js'

interface World {
  recordings?: RecordingFigures
  domains: { name: string; channelLimit: number }[]
  live: Map<string, number>
  up: boolean
  callbacks: CallbackFigures
  journal: JournalFigures
  now: number
}

const world = (): World => ({
  domains: [{ name: 'Example.test', channelLimit: 20 }],
  live: new Map(),
  up: true,
  callbacks: { queued: 0, inFlight: 0, oldestPendingAt: undefined, delivered: 0, retried: 0, deadLettered: 0 },
  journal: { bytes: 0, deadLetters: 0, pendingResults: 0, openRequests: 0, writeErrors: 0 },
  now: 1_000_000,
})

const sourcesOf = (w: World): MetricSources => ({
  domains: () => w.domains,
  liveChannels: () => w.live,
  eslConnected: () => w.up,
  callbacks: () => w.callbacks,
  journal: () => w.journal,
  ...(w.recordings !== undefined ? { recordings: () => w.recordings as RecordingFigures } : {}),
  now: () => w.now,
})

const make = (t: Test, w: World): DaemonMetrics => {
  const m = createMetrics({ prefix: '/api', sources: sourcesOf(w), processMetrics: false })
  t.teardown(() => m.close())
  return m
}

t.test('two daemons in one process: separate registries, no collision, separate values', async (t) => {
  const a = world()
  const b = world()
  const ma = make(t, a)
  const mb = make(t, b)
  a.live.set('example.test', 3)
  b.live.set('example.test', 5)
  t.equal(valueOf(await ma.render(), 'cod_channels_live{domain="example.test"}'), 3)
  t.equal(valueOf(await mb.render(), 'cod_channels_live{domain="example.test"}'), 5)
})

t.test('collected at scrape time: live channels (unknown domains folded), channel_limit, ESL, callbacks, journal', async (t) => {
  const w = world()
  const m = make(t, w)
  let text = await m.render()
  t.equal(valueOf(text, 'cod_channels_live{domain="example.test"}'), 0, 'a configured domain shows 0, not nothing')
  t.equal(valueOf(text, 'cod_channel_limit{domain="example.test"}'), 20)
  t.equal(valueOf(text, 'cod_esl_up'), 1)
  t.equal(valueOf(text, 'cod_channel_limit_refusals_total{domain="example.test"}'), 0, 'refusals exist at 0 before the first')
  w.live.set('example.test', 4).set('stranger.test', 2).set('other.test', 1)
  w.up = false
  w.domains = [{ name: 'Example.test', channelLimit: 30 }]
  w.callbacks = { queued: 3, inFlight: 1, oldestPendingAt: w.now - 90_000, delivered: 7, retried: 2, deadLettered: 1 }
  w.journal = { bytes: 4096, deadLetters: 1, pendingResults: 4, openRequests: 2, writeErrors: 0 }
  text = await m.render()
  t.equal(valueOf(text, 'cod_channels_live{domain="example.test"}'), 4)
  t.equal(valueOf(text, `cod_channels_live{domain="${OTHER_DOMAIN}"}`), 3, 'two unconfigured domains in one label value')
  t.notMatch(text, /stranger\.test|other\.test/, 'no unconfigured domain name is a label')
  t.equal(valueOf(text, 'cod_channel_limit{domain="example.test"}'), 30, 'a reload shows at the next scrape')
  t.equal(valueOf(text, 'cod_esl_up'), 0)
  t.equal(valueOf(text, 'cod_callback_queue_depth{state="queued"}'), 3)
  t.equal(valueOf(text, 'cod_callback_queue_depth{state="in_flight"}'), 1)
  t.equal(valueOf(text, 'cod_callback_oldest_pending_age_seconds'), 90)
  t.equal(valueOf(text, 'cod_callback_deliveries_total{outcome="delivered"}'), 7)
  t.equal(valueOf(text, 'cod_callback_deliveries_total{outcome="retried"}'), 2)
  t.equal(valueOf(text, 'cod_callback_deliveries_total{outcome="dead_letter"}'), 1)
  t.equal(valueOf(text, 'cod_journal_size_bytes'), 4096)
  t.equal(valueOf(text, 'cod_journal_dead_letters'), 1)
  t.equal(valueOf(text, 'cod_journal_pending_results'), 4)
  t.equal(valueOf(text, 'cod_journal_open_requests'), 2)
  w.callbacks = { ...w.callbacks, delivered: 9, oldestPendingAt: undefined }
  text = await m.render()
  t.equal(valueOf(text, 'cod_callback_deliveries_total{outcome="delivered"}'), 9, 'the counter follows the total')
  t.equal(valueOf(text, 'cod_callback_oldest_pending_age_seconds'), 0, 'nothing pending: 0')
})

t.test('requests: operation and status labels, latency, originate latency, limit refusals by (folded) domain', async (t) => {
  const w = world()
  const m = make(t, w)
  const base = { errorId: undefined, domain: undefined, seconds: 0.004, originateSeconds: undefined }
  m.request({ ...base, operation: 'call_user', path: '/api/call_user', status: 200, domain: 'Example.test', originateSeconds: 0.002 })
  m.request({ ...base, operation: 'call_user', path: '/api/call_user', status: 429, errorId: 'channel_limit_reached', domain: 'Example.test' })
  m.request({ ...base, operation: 'call_user', path: '/api/call_user', status: 429, errorId: 'channel_limit_reached', domain: 'gone.test' })
  m.request({ ...base, operation: undefined, path: '/api/0399990000/c0ffee00-1111-2222-3333-444455556666', status: 404, errorId: 'not_found' })
  m.request({ ...base, operation: undefined, path: '/api/gen_ws_ticket', status: 200 })
  const text = await m.render()
  t.equal(valueOf(text, 'cod_http_requests_total{operation="call_user",status="200",error="none"}'), 1)
  t.equal(valueOf(text, 'cod_http_requests_total{operation="call_user",status="429",error="channel_limit_reached"}'), 2)
  t.equal(valueOf(text, 'cod_http_requests_total{operation="other",status="404",error="not_found"}'), 1, 'an unknown path is "other"')
  t.equal(valueOf(text, 'cod_http_requests_total{operation="gen_ws_ticket",status="200",error="none"}'), 1)
  t.notMatch(text, /0399990000|c0ffee00/, 'no number and no UUID of a path becomes a label')
  t.equal(valueOf(text, 'cod_http_request_duration_seconds_count{operation="call_user"}'), 3)
  t.equal(valueOf(text, 'cod_originate_duration_seconds_count{operation="call_user"}'), 1)
  t.equal(valueOf(text, 'cod_channel_limit_refusals_total{domain="example.test"}'), 1)
  t.equal(valueOf(text, `cod_channel_limit_refusals_total{domain="${OTHER_DOMAIN}"}`), 1, 'a domain no longer configured is folded')
})

t.test('route labels are a fixed set', async (t) => {
  t.equal(routeLabel(undefined, '/healthz', '/api'), 'healthz')
  t.equal(routeLabel(undefined, '/metrics', '/api'), 'metrics')
  t.equal(routeLabel(undefined, '/api/openapi.json', '/api'), 'openapi')
  t.equal(routeLabel(undefined, '/api/ws_cti', '/api'), 'ws_cti')
  t.equal(routeLabel(undefined, '/api/openapi.jsonx', '/api'), 'other')
  t.equal(routeLabel(undefined, '/anything/else', '/api'), 'other')
  t.equal(routeLabel('call_group', '/api/call_group', '/api'), 'call_group')
})

t.test('ESL: only reconnections count; event lag samples one event, then waits for the next second', async (t) => {
  const w = world()
  const m = make(t, w)
  m.eslConnected()
  let text = await m.render()
  t.equal(valueOf(text, 'cod_esl_reconnects_total'), 0, 'the first connection is not a reconnection')
  m.eslConnected()
  m.eslConnected()
  const micros = (w.now - 250) * 1000
  m.eslEvent({ 'Event-Name': 'HEARTBEAT' })
  m.eslEvent({ 'Event-Date-Timestamp': String(micros) })
  m.eslEvent({ 'Event-Date-Timestamp': String(micros) })
  text = await m.render()
  t.equal(valueOf(text, 'cod_esl_reconnects_total'), 2)
  t.equal(valueOf(text, 'cod_esl_event_lag_seconds_count'), 1, 'an event without a date is skipped; one dated event per second is sampled')
  t.equal(valueOf(text, 'cod_esl_event_lag_seconds_sum'), 0.25)
})

t.test('the IVR fetch decorator counts each outcome and passes the result through', async (t) => {
  const w = world()
  const m = make(t, w)
  const inner: IvrFetcher = {
    fetchDocument: async (urls) => (urls[0] === 'ok' ? ok({ url: 'u', requestedUrl: 'u', body: '<Response/>', contentType: 'text/xml' }) : err(fetchError('timeout', 'u', 'timed out'))),
    fetchJson: async () => err(fetchError('blocked_address', 'u', 'refused')),
    checkTarget: async () => ok(undefined),
    reportError: async () => undefined,
    notify: async () => undefined,
  }
  const f = countingFetcher(inner, (kind, outcome) => m.ivrFetch(kind, outcome))
  t.equal((await f.fetchDocument(['ok'], {})).ok, true)
  const failed = await f.fetchDocument(['slow'], {})
  t.equal(failed.ok ? undefined : failed.error.kind, 'timeout', 'the failure passes through unchanged')
  await f.fetchJson('u', {})
  await f.checkTarget('u')
  const text = await m.render()
  t.equal(valueOf(text, 'cod_ivr_fetches_total{kind="document",outcome="ok"}'), 1)
  t.equal(valueOf(text, 'cod_ivr_fetches_total{kind="document",outcome="timeout"}'), 1)
  t.equal(valueOf(text, 'cod_ivr_fetches_total{kind="json",outcome="blocked_address"}'), 1)
  t.equal(valueOf(text, 'cod_ivr_fetches_total{kind="play_url",outcome="ok"}'), 1)
})

t.test('recordings (issue 28): counters follow the store\'s totals, the gauge its records on disk; 0 without a store', async (t) => {
  const none = make(t, world())
  const empty = await none.render()
  for (const outcome of ['started', 'completed', 'failed']) t.equal(valueOf(empty, `cod_recordings_total{outcome="${outcome}"}`), 0)
  t.equal(valueOf(empty, 'cod_recording_bytes_total'), 0)
  t.equal(valueOf(empty, 'cod_recordings_on_disk'), 0)
  const w = { ...world(), recordings: { started: 3, completed: 2, failed: 1, bytesWritten: 96088, onDisk: 5 } }
  const m = make(t, w)
  let text = await m.render()
  t.equal(valueOf(text, 'cod_recordings_total{outcome="started"}'), 3)
  t.equal(valueOf(text, 'cod_recordings_total{outcome="completed"}'), 2)
  t.equal(valueOf(text, 'cod_recordings_total{outcome="failed"}'), 1)
  t.equal(valueOf(text, 'cod_recording_bytes_total'), 96088)
  t.equal(valueOf(text, 'cod_recordings_on_disk'), 5)
  w.recordings = { started: 4, completed: 3, failed: 1, bytesWritten: 100000, onDisk: 2 }
  text = await m.render()
  t.equal(valueOf(text, 'cod_recordings_total{outcome="started"}'), 4)
  t.equal(valueOf(text, 'cod_recording_bytes_total'), 100000)
  t.equal(valueOf(text, 'cod_recordings_on_disk'), 2, 'the gauge goes down as recordings are deleted')
})

t.test('the recordings routes have bounded route labels: never the id', async (t) => {
  t.equal(routeLabel(undefined, '/api/recordings', '/api'), 'recordings')
  t.equal(routeLabel(undefined, '/api/recordings/0f6c0000-0000-4000-8000-000000000000', '/api'), 'recording')
  t.equal(routeLabel(undefined, '/api/recordings/0f6c0000-0000-4000-8000-000000000000/audio', '/api'), 'recording_audio')
  t.equal(routeLabel(undefined, '/api/recordings/anything/at/all', '/api'), 'recording')
})
