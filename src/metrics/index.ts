/**
 * The daemon's Prometheus metrics (issue 16 item 2; docs/operations.md "Metrics"). One registry
 * per daemon (tests start several daemons in one process; prom-client's global registry would
 * mix them), created by daemon.ts and served by router.ts at `GET /metrics`.
 *
 * Only this folder imports prom-client (`.dependency-cruiser.mjs`), and only daemon.ts imports
 * this folder: the parts report through small interfaces of their own (the API's `onRequest`,
 * the ESL link's `onConnected` and `onEvent`, the IVR fetcher decorated by ivr-fetches.ts),
 * and everything else is read at scrape time from MetricSources.
 */
import { collectDefaultMetrics, Registry } from 'prom-client'
import { collectedFamilies, pushedFamilies, type PushedFamilies } from './families.js'
import type { IvrFetchKind } from './known-labels.js'
import { domainLabel, routeLabel, statusLabel } from './labels.js'
import type { MetricSources } from './sources.js'

export type { MetricSources, CallbackFigures, DomainLimit, JournalFigures, RecordingFigures, WaitingFigures } from './sources.js'
export { countingFetcher } from './ivr-fetches.js'
export { metricsRouter, METRICS_PATH } from './router.js'

/** What the API tells of one answered request (api/app.ts RequestRecord has this shape). */
export interface RequestFacts {
  readonly operation: string | undefined
  readonly path: string
  readonly status: number
  readonly errorId: string | undefined
  readonly domain: string | undefined
  readonly seconds: number
  readonly originateSeconds: number | undefined
}

export interface DaemonMetrics {
  readonly registry: Registry
  /** The text exposition of every family, collected now. */
  render(): Promise<string>
  request(r: RequestFacts): void
  /** An ESL (re)connection: every one after the first counts as a reconnection. */
  eslConnected(): void
  /** Every ESL event; looks at one per second (event-lag sampling), returns at once for the rest. */
  eslEvent(event: Readonly<Record<string, string | undefined>>): void
  ivrFetch(kind: IvrFetchKind, outcome: string): void
  /** One fetch answered by the xml_curl listener (xmlcurl/router.ts XmlCurlAnswer has this shape). */
  xmlCurl(a: { readonly section: string; readonly outcome: string; readonly seconds: number }): void
  /** Stops the sampling timer. */
  close(): void
}

export interface MetricsOptions {
  readonly sources: MetricSources
  /** http.prefix, read once like the routes themselves. */
  readonly prefix: string
  /** Process metrics (CPU, memory, event loop lag, GC): on by default. */
  readonly processMetrics?: boolean
}

export function createMetrics(opts: MetricsOptions): DaemonMetrics {
  const registry = new Registry()
  const registers = [registry]
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry })
  const pushed: PushedFamilies = pushedFamilies(registers, opts.sources)
  collectedFamilies(registers, opts.sources)
  const now = opts.sources.now ?? Date.now

  let connections = 0
  // Event lag: one event per second is looked at, so the ESL hot path pays one boolean test.
  let sampleNext = true
  const sampler = setInterval(() => (sampleNext = true), 1000)
  sampler.unref()

  return {
    registry,
    render: () => registry.metrics(),
    request(r) {
      const operation = routeLabel(r.operation, r.path, opts.prefix)
      pushed.requests.inc({ operation, status: statusLabel(r.status), error: r.errorId ?? 'none' })
      pushed.requestSeconds.observe({ operation }, r.seconds)
      if (r.originateSeconds !== undefined) pushed.originateSeconds.observe({ operation }, r.originateSeconds)
      if (r.errorId === 'channel_limit_reached') {
        const configured = new Set(opts.sources.domains().map((d) => d.name.toLowerCase()))
        pushed.limitRefusals.inc({ domain: domainLabel(r.domain, configured) })
      }
    },
    eslConnected() {
      connections++
      if (connections > 1) pushed.eslReconnects.inc()
    },
    eslEvent(event) {
      if (!sampleNext) return
      const micros = Number(event['Event-Date-Timestamp'])
      if (!Number.isFinite(micros) || micros <= 0) return
      sampleNext = false
      pushed.eventLag.observe(Math.max(0, now() - micros / 1000) / 1000)
    },
    ivrFetch(kind, outcome) {
      pushed.ivrFetches.inc({ kind, outcome })
    },
    xmlCurl(a) {
      pushed.xmlCurlRequests.inc({ section: a.section, outcome: a.outcome })
      pushed.xmlCurlSeconds.observe({ section: a.section }, a.seconds)
    },
    close() {
      clearInterval(sampler)
    },
  }
}
