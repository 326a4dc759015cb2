/**
 * Every metric family of the daemon, on one registry (docs/operations.md lists them). Two kinds:
 * - pushed: counters and histograms the daemon's parts feed through the recorder (index.ts),
 *   one call per request, reconnection, sampled event or IVR fetch; never per ESL event;
 * - collected: read from MetricSources when Prometheus scrapes (`collect()`), so the parts pay
 *   nothing between scrapes. Counters among them (callback outcomes, journal write errors) are
 *   advanced by the difference since the previous scrape.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { API_OPERATIONS, IVR_FETCH_KINDS, IVR_FETCH_OUTCOMES, SUCCESS, XMLCURL_OUTCOMES, XMLCURL_SECTIONS } from './known-labels.js'
import { domainLabel } from './labels.js'
import type { MetricSources, RecordingFigures, WaitingFigures } from './sources.js'

/** Request latencies: 1 ms to 10 s (an originate waits for FreeSWITCH's acceptance). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Event lag: under a millisecond on a healthy link, seconds when the daemon or the link stalls. */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30]

export interface PushedFamilies {
  readonly requests: Counter<'operation' | 'status' | 'error'>
  readonly requestSeconds: Histogram<'operation'>
  readonly originateSeconds: Histogram<'operation'>
  readonly limitRefusals: Counter<'domain'>
  readonly eslReconnects: Counter
  readonly eventLag: Histogram
  readonly ivrFetches: Counter<'kind' | 'outcome'>
  readonly xmlCurlRequests: Counter<'section' | 'outcome'>
  readonly xmlCurlSeconds: Histogram<'section'>
}

export function pushedFamilies(registers: Registry[], sources: MetricSources): PushedFamilies {
  const families = createPushed(registers, sources)
  zeroKnownSeries(families)
  return families
}

/**
 * The series whose labels are known in advance (known-labels.ts), at 0, so that every family is
 * in the first scrape. Other label values (a request's status and error other than a success,
 * the routes besides the operations) appear at their first use: docs/operations.md says which.
 */
function zeroKnownSeries(f: PushedFamilies): void {
  for (const operation of API_OPERATIONS) {
    f.requests.inc({ operation, ...SUCCESS }, 0)
    f.requestSeconds.zero({ operation })
    f.originateSeconds.zero({ operation })
  }
  for (const kind of IVR_FETCH_KINDS) for (const outcome of IVR_FETCH_OUTCOMES) f.ivrFetches.inc({ kind, outcome }, 0)
  for (const section of XMLCURL_SECTIONS) {
    f.xmlCurlSeconds.zero({ section })
    for (const outcome of XMLCURL_OUTCOMES) f.xmlCurlRequests.inc({ section, outcome }, 0)
  }
}

function createPushed(registers: Registry[], sources: MetricSources): PushedFamilies {
  return {
    requests: new Counter({
      name: 'cod_http_requests_total',
      help: 'HTTP requests answered by the API listener, by operation (or route), HTTP status and API error id ("none" on success)',
      labelNames: ['operation', 'status', 'error'],
      registers,
    }),
    requestSeconds: new Histogram({
      name: 'cod_http_request_duration_seconds',
      help: 'Time from a request’s arrival to its reply, by operation (or route)',
      labelNames: ['operation'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    originateSeconds: new Histogram({
      name: 'cod_originate_duration_seconds',
      help: 'Time FreeSWITCH took to accept (or the engine to refuse) an originate, by operation',
      labelNames: ['operation'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    limitRefusals: new Counter({
      name: 'cod_channel_limit_refusals_total',
      help: 'Requests refused with channel_limit_reached, by domain',
      labelNames: ['domain'],
      registers,
      // Every configured domain's series exists (at 0) before its first refusal, for rate() and alerts.
      collect() {
        for (const d of sources.domains()) this.inc({ domain: d.name.toLowerCase() }, 0)
      },
    }),
    eslReconnects: new Counter({
      name: 'cod_esl_reconnects_total',
      help: 'ESL connections to FreeSWITCH made again after the first one',
      registers,
    }),
    eventLag: new Histogram({
      name: 'cod_esl_event_lag_seconds',
      help: 'Time from FreeSWITCH dating an event (Event-Date-Timestamp) to the daemon receiving it; one event sampled per second',
      buckets: LAG_BUCKETS,
      registers,
    }),
    ivrFetches: new Counter({
      name: 'cod_ivr_fetches_total',
      help: 'IVR requests (documents, GetJSON, Play URL checks) by kind and outcome ("ok" or the failure kind)',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    xmlCurlRequests: new Counter({
      name: 'cod_xmlcurl_requests_total',
      help: "FreeSWITCH's mod_xml_curl fetches answered by the xml_curl listener, by section and outcome (found, not_found, refused, error)",
      labelNames: ['section', 'outcome'],
      registers,
    }),
    xmlCurlSeconds: new Histogram({
      name: 'cod_xmlcurl_duration_seconds',
      help: "Time to answer one mod_xml_curl fetch, by section: a FreeSWITCH thread waits on each",
      labelNames: ['section'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
  }
}

/**
 * A counter whose total lives elsewhere: advanced by the difference at each scrape (by 0 too, so
 * that every series exists from the first scrape on and alert rules see 0, not nothing).
 */
function follow<L extends string>(counter: Counter<L>, labels: Partial<Record<L, string>>, last: Map<string, number>, key: string, value: number): void {
  const before = last.get(key) ?? 0
  counter.inc(labels, Math.max(0, value - before))
  last.set(key, Math.max(before, value))
}

const NO_RECORDINGS: RecordingFigures = { started: 0, completed: 0, failed: 0, bytesWritten: 0, onDisk: 0 }
const NO_WAITS: WaitingFigures = { waiting: new Map(), ended: { taken: 0, timeout: 0, full: 0, abandoned: 0 }, waitedMs: 0 }
const WAIT_ENDS = ['taken', 'timeout', 'full', 'abandoned'] as const

export function collectedFamilies(registers: Registry[], sources: MetricSources): void {
  const now = sources.now ?? Date.now
  new Gauge({
    name: 'cod_esl_up',
    help: '1 while the ESL link to FreeSWITCH is up (what /healthz reports), else 0',
    registers,
    collect() {
      this.set(sources.eslConnected() ? 1 : 0)
    },
  })
  new Gauge({
    name: 'cod_channels_live',
    help: 'Live (not hung up) channels per domain, as the channel model sees them; unconfigured domains in "_other"',
    labelNames: ['domain'],
    registers,
    collect() {
      this.reset()
      const configured = new Set(sources.domains().map((d) => d.name.toLowerCase()))
      for (const name of configured) this.set({ domain: name }, 0)
      for (const [domain, live] of sources.liveChannels()) this.inc({ domain: domainLabel(domain, configured) }, live)
    },
  })
  new Gauge({
    name: 'cod_channel_limit',
    help: 'The configured channel_limit per domain',
    labelNames: ['domain'],
    registers,
    collect() {
      this.reset()
      for (const d of sources.domains()) this.set({ domain: d.name.toLowerCase() }, d.channelLimit)
    },
  })
  const deliveredSeen = new Map<string, number>()
  new Counter({
    name: 'cod_callback_deliveries_total',
    help: 'Result callback attempts by outcome: delivered (2xx), retried (failed, tried again later), dead_letter (given up)',
    labelNames: ['outcome'],
    registers,
    collect() {
      const c = sources.callbacks()
      follow(this, { outcome: 'delivered' }, deliveredSeen, 'delivered', c.delivered)
      follow(this, { outcome: 'retried' }, deliveredSeen, 'retried', c.retried)
      follow(this, { outcome: 'dead_letter' }, deliveredSeen, 'dead_letter', c.deadLettered)
    },
  })
  new Gauge({
    name: 'cod_callback_queue_depth',
    help: 'Results not yet delivered: queued (waiting for an attempt or a retry) and in_flight',
    labelNames: ['state'],
    registers,
    collect() {
      const c = sources.callbacks()
      this.set({ state: 'queued' }, c.queued)
      this.set({ state: 'in_flight' }, c.inFlight)
    },
  })
  new Gauge({
    name: 'cod_callback_oldest_pending_age_seconds',
    help: 'Age of the oldest result not yet delivered (0 when none is pending)',
    registers,
    collect() {
      const oldest = sources.callbacks().oldestPendingAt
      this.set(oldest === undefined ? 0 : Math.max(0, (now() - oldest) / 1000))
    },
  })
  const journalGauge = (name: string, help: string, read: (j: ReturnType<MetricSources['journal']>) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(sources.journal()))
      },
    })
  }
  journalGauge('cod_journal_size_bytes', 'Bytes of the result journal’s active segment file', (j) => j.bytes)
  journalGauge('cod_journal_dead_letters', 'Results given up and kept in the journal as dead letters', (j) => j.deadLetters)
  journalGauge('cod_journal_pending_results', 'Results in the journal not yet acknowledged by their receiver', (j) => j.pendingResults)
  journalGauge('cod_journal_open_requests', 'Accepted requests whose result is not known yet', (j) => j.openRequests)
  const recordingFigures = (): RecordingFigures => sources.recordings?.() ?? NO_RECORDINGS
  const recordingsSeen = new Map<string, number>()
  new Counter({
    name: 'cod_recordings_total',
    help: 'Call recordings by outcome: started, completed (with audio), failed (no audio: a refused write, a full disk, a missing file)',
    labelNames: ['outcome'],
    registers,
    collect() {
      const r = recordingFigures()
      follow(this, { outcome: 'started' }, recordingsSeen, 'started', r.started)
      follow(this, { outcome: 'completed' }, recordingsSeen, 'completed', r.completed)
      follow(this, { outcome: 'failed' }, recordingsSeen, 'failed', r.failed)
    },
  })
  const recordingBytesSeen = new Map<string, number>()
  new Counter({
    name: 'cod_recording_bytes_total',
    help: 'Bytes of audio of the completed recordings',
    registers,
    collect() {
      follow(this, {}, recordingBytesSeen, 'bytes', recordingFigures().bytesWritten)
    },
  })
  new Gauge({
    name: 'cod_recordings_on_disk',
    help: 'Recordings kept in recording.dir now (any status), until deleted or past their retention',
    registers,
    collect() {
      this.set(recordingFigures().onDisk)
    },
  })
  const waitFigures = (): WaitingFigures => sources.waits?.() ?? NO_WAITS
  new Gauge({
    name: 'cod_requests_waiting',
    help: 'Requests waiting for a free channel now (their wait_ms), per domain',
    labelNames: ['domain'],
    registers,
    collect() {
      this.reset()
      const configured = new Set(sources.domains().map((d) => d.name.toLowerCase()))
      for (const name of configured) this.set({ domain: name }, 0)
      for (const [domain, n] of waitFigures().waiting) this.inc({ domain: domainLabel(domain, configured) }, n)
    },
  })
  new Gauge({
    name: 'cod_originates_waiting_for_pace',
    help: "Originates waiting now for their turn under FreeSWITCH's sessions-per-second (freeswitch.max_originates_per_second), on this box",
    registers,
    collect() {
      this.set(waitFigures().pacedNow ?? 0)
    },
  })
  const waitsSeen = new Map<string, number>()
  new Counter({
    name: 'cod_channel_waits_total',
    help: 'Waits for a free channel by how they ended: taken (placed), timeout (wait_ms passed), full (limits.max_waiting), abandoned (the client went away, or the daemon stopped)',
    labelNames: ['outcome'],
    registers,
    collect() {
      const w = waitFigures()
      for (const outcome of WAIT_ENDS) follow(this, { outcome }, waitsSeen, outcome, w.ended[outcome])
    },
  })
  const waitedSeen = new Map<string, number>()
  new Counter({
    name: 'cod_channel_wait_seconds_total',
    help: 'Seconds requests spent waiting for a free channel, in all (divided by cod_channel_waits_total: the mean wait)',
    registers,
    collect() {
      follow(this, {}, waitedSeen, 'seconds', waitFigures().waitedMs / 1000)
    },
  })
  const writeErrorsSeen = new Map<string, number>()
  new Counter({
    name: 'cod_journal_write_errors_total',
    help: 'Journal writes that failed (logged at error level): results may not survive a crash',
    registers,
    collect() {
      follow(this, {}, writeErrorsSeen, 'errors', sources.journal().writeErrors)
    },
  })
}
