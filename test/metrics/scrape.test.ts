/**
 * GET /metrics on a whole daemon over the simulator (issue 16 item 2): every family is there
 * from the start with the series docs/operations.md promises, and after a call (answered, bridged, its callback delivered), a refused
 * request and an undeliverable callback, the values moved: requests by operation and status,
 * latencies, live channels per domain, callbacks delivered and dead-lettered, the journal. No
 * label value is a UUID or a phone number. The daemon logs where the metrics are at start.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { createLogger } from '../../src/util/logger.js'
import { startHarness } from '../e2e/harness.js'
import { startTestDaemon, stopTestDaemon } from '../support/daemon.js'
import { waitForValue } from '../support/wait.js'
import { FAMILIES, FIRST_SCRAPE_SERIES, valueOf } from './expected.js'

t.setTimeout(90_000)

const scrape = async (base: string): Promise<{ status: number; type: string | null; text: string }> => {
  const res = await fetch(`${base}/metrics`)
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}

/** Scrapes every 100 ms until `done` holds (the text), or 20 s passed (undefined). */
async function scrapeUntil(base: string, done: (text: string) => boolean): Promise<string | undefined> {
  const probe = async () => {
    const { text } = await scrape(base)
    return done(text) ? text : undefined
  }
  return waitForValue('a scrape that shows it', probe, 20_000, 100).catch(() => undefined)
}

t.test('every family from the start; after calls the values moved; labels bounded', async (t) => {
  const h = await startHarness()
  t.teardown(() => h.close())
  // A receiver that refuses every result (404: a failure not retried, so a dead letter at once).
  const refusing = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(404).end())
  })
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => refusing.close(() => r())))
  const refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/cb`

  const first = await scrape(h.daemon.baseUrl)
  t.equal(first.status, 200)
  t.match(first.type, /^text\/plain; version=0\.0\.4/, 'the Prometheus text format')
  for (const family of FAMILIES) t.match(first.text, new RegExp(`^# TYPE ${family} `, 'm'), `${family} is exposed`)
  // A family with a TYPE line and no series is nothing to rate() or an alert: each has series.
  for (const family of FAMILIES) t.match(first.text, new RegExp(`^${family}(_bucket|_sum|_count)?[{ ]`, 'm'), `${family} has a series in the first scrape`)
  for (const series of FIRST_SCRAPE_SERIES) t.not(valueOf(first.text, series), undefined, `${series} is in the first scrape`)
  t.equal(valueOf(first.text, 'cod_esl_up'), 1)
  t.equal(valueOf(first.text, 'cod_channel_limit{domain="example.test"}'), h.daemon.store.current().config.domains.find((d) => d.name === 'example.test')?.channel_limit)
  t.equal(valueOf(first.text, 'cod_channels_live{domain="example.test"}'), 0)

  const placed = await h.post('call_user', { user_name: 'alice', destination: 'bob', callback_url: h.callbackUrl })
  t.equal(placed.status, 200)
  // The call is up (alice's leg, then the bridged leg to bob): scraped until the model counts it.
  t.ok(await scrapeUntil(h.daemon.baseUrl, (text) => (valueOf(text, 'cod_channels_live{domain="example.test"}') ?? 0) >= 1), 'live channels of the domain while the call runs')
  await h.waitFor('the result callback', () => h.callbacks.length >= 1, 15_000)
  t.equal((await h.post('call_user', { user_name: 'nobody', destination: 'bob' })).status, 404)
  t.equal((await h.post('call_user', { user_name: 'bob', destination: '0399990000', callback_url: refusingUrl })).status, 200)

  // Scraped until the refused callback is a dead letter (generous: the machine may be loaded).
  const text = (await scrapeUntil(h.daemon.baseUrl, (s) => (valueOf(s, 'cod_journal_dead_letters') ?? 0) >= 1)) ?? ''
  t.equal(valueOf(text, 'cod_http_requests_total{operation="call_user",status="200",error="none"}'), 2)
  t.equal(valueOf(text, 'cod_http_requests_total{operation="call_user",status="404",error="user_not_found"}'), 1)
  t.ok((valueOf(text, 'cod_http_requests_total{operation="metrics",status="200",error="none"}') ?? 0) >= 2, 'the scrapes themselves')
  t.equal(valueOf(text, 'cod_http_request_duration_seconds_count{operation="call_user"}'), 3)
  t.equal(valueOf(text, 'cod_originate_duration_seconds_count{operation="call_user"}'), 2)
  t.ok((valueOf(text, 'cod_callback_deliveries_total{outcome="delivered"}') ?? 0) >= 1, 'a callback delivered')
  t.equal(valueOf(text, 'cod_callback_deliveries_total{outcome="dead_letter"}'), 1, 'the refused one is a dead letter')
  t.ok((valueOf(text, 'cod_esl_event_lag_seconds_count') ?? 0) >= 1, 'event lag sampled')
  t.ok((valueOf(text, 'cod_journal_size_bytes') ?? 0) > 0, 'the journal grew')
  t.equal(valueOf(text, 'cod_esl_reconnects_total'), 0)
  // The calls' answered legs fetched their dialplan from the xml_curl listener.
  t.ok((valueOf(text, 'cod_xmlcurl_requests_total{section="dialplan",outcome="found"}') ?? 0) >= 1, 'dialplan documents served')
  t.ok((valueOf(text, 'cod_xmlcurl_duration_seconds_count{section="dialplan"}') ?? 0) >= 1, 'and timed')

  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.includes('{')) continue
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'))
    for (const m of labels.matchAll(/(\w+)="([^"]*)"/g)) {
      const [, name, value] = m
      if (name === 'le' || name === 'quantile') continue
      if (/[0-9a-f]{8}-[0-9a-f]{4}-/i.test(value ?? '') || /\d{4,}/.test(value ?? '')) t.fail(`label ${name}="${value}" in ${line}`)
      if (name === 'status') t.match(value, /^[1-5]\d\d$/, `status label ${value}`)
    }
  }
})

t.test('the daemon logs where the metrics are at start', async (t) => {
  const out = new PassThrough()
  let logged = ''
  out.on('data', (c: Buffer) => (logged += c.toString()))
  const daemon = await startTestDaemon(undefined, { logger: createLogger('info', out), simulatorPort: 0, simulatorTimeScale: 0.05, waitLink: false })
  await stopTestDaemon(daemon)
  const line = logged
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { msg?: string; url?: string })
    .find((l) => l.msg?.startsWith('Prometheus metrics served') === true)
  t.equal(line?.url, `${daemon.baseUrl}/metrics`)
})
