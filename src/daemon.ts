/**
 * The composition root: builds every part of the picture in docs/architecture.md and wires them
 * together. main.ts (signals, arguments), the demo, the end-to-end tests and the benchmarks all
 * start the daemon through here, so they exercise exactly what operators run.
 */
import { createServer, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { ConfigStore } from './runtime/store.js'
import type { Logger } from './util/logger.js'
import { createStdoutLogger } from './util/logger.js'
import { createApp } from './api/app.js'
import { AuthThrottle } from './api/throttle.js'
import { idempotencyStoreOf } from './api/idempotency.js'
import { unsettledIntents } from './api/unsettled-intents.js'
import { journalIntents } from './origination/intents.js'
import { connectPbx } from './pbx/connection.js'
import { boxRegistrations } from './pbx/box-registrations.js'
import { createChannelModel } from './channels/index.js'
import { createEngine } from './origination/engine.js'
import { CallbackDispatcher } from './callbacks/dispatcher.js'
import { journalDirOf, openJournal } from './journal/index.js'
import { xmlCurlListener } from './xmlcurl/listener.js'
import { originOf, xmlCurlPathOf } from './config/endpoints.js'
import { errorBody, statusOf } from './api/errors.js'
import { createCti } from './cti/index.js'
import { uiRouter } from './ui/router.js'
import { Simulator } from './sim/index.js'
import type { PbxClient } from './pbx/types.js'
import { createIvrRunner, acceptIvrDocument, type IvrRunner } from './ivr/runner/index.js'
import { createFetcher, createIvrTransport } from './ivr/fetch/fetcher.js'
import { allowListOf } from './net/allow-list.js'
import { reloadCertificate, secureContextOptions, type TlsCredentials } from './net/tls.js'
import { createCallbackTransport } from './callbacks/transport.js'
import type { OriginationEngine } from './origination/plan.js'
import { err, ok, type Result } from './util/result.js'
import { countingFetcher, createMetrics, metricsRouter, METRICS_PATH } from './metrics/index.js'
import type { ClusterNode } from './cluster/index.js'

export interface DaemonOptions {
  /** Path of daemon.yaml. */
  configFile: string
  logger?: Logger
  /** Listen on these instead of the configured ports (tests and the demo use 0: any free port). */
  httpPort?: number
  /**
   * The xml_curl listener's port instead of `xml_curl.port`. When absent and `httpPort` is 0, it
   * is 0 too: a caller asking for any free API port wants no fixed port anywhere (tests run side by side).
   */
  xmlCurlPort?: number
  /** Simulator mode: port of the built-in simulator (0 = any free port). */
  simulatorPort?: number
  /** Simulator mode: multiply every simulated delay (tests use small values). */
  simulatorTimeScale?: number
  /** The journal's folder instead of `journal.dir` (tests and the demo: a folder of their own). */
  journalDir?: string
}

export interface Daemon {
  readonly store: ConfigStore
  readonly logger: Logger
  readonly pbx: PbxClient
  /** The built-in simulator, in simulator mode. */
  readonly simulator: Simulator | undefined
  readonly httpPort: number
  readonly baseUrl: string
  /** The xml_curl listener (FreeSWITCH's documents): its port, `http://host:port`, and the URL mod_xml_curl posts to. */
  readonly xmlCurlPort: number
  readonly xmlCurlBaseUrl: string
  readonly xmlCurlUrl: string
  /** Loads the configuration again (SIGHUP); on failure the running one stays. */
  reload(): Promise<Result<void, string[]>>
  /** Graceful stop (SIGTERM): no new requests, pending callbacks delivered or left in the journal. */
  stop(): Promise<void>
}

const listen = (server: Server, port: number, host: string): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve((server.address() as AddressInfo).port)
    })
  })

/**
 * Every listener of the daemon is made here, so that they share every server setting
 * (timeouts): the API's and the xml_curl one.
 *
 * A client has `http.request_timeout_ms` to send a whole request, headers and body: a body
 * trickled byte by byte (slowloris) is cut with 408 then. Node's own defaults (5 min for a
 * request, 1 min for headers, checked every 30 s) would let a few hundred such connections
 * hold the listener for minutes. The check runs every second so the bound is the setting
 * (+1 s), not the setting plus 30 s. Idle keep-alive connections close after Node's 5 s.
 */
const newServer = (http: { readonly request_timeout_ms: number }, tls?: TlsCredentials): Server => {
  const timeouts = { requestTimeout: http.request_timeout_ms, headersTimeout: http.request_timeout_ms, connectionsCheckingInterval: 1000 }
  if (tls === undefined) return createServer(timeouts)
  // With `http.tls` (the API listener only): the handshake comes before the request's clock
  // starts, so it gets the same bound rather than Node's 120 s.
  return createHttpsServer({ ...timeouts, ...secureContextOptions(tls), handshakeTimeout: http.request_timeout_ms })
}

/** Listens on each in turn; if one cannot, those already listening are closed and the reason returned. */
async function listenAll(listeners: readonly { name: string; server: Server; host: string; port: number }[]): Promise<Result<number[], string[]>> {
  const ports: number[] = []
  for (const l of listeners) {
    try {
      ports.push(await listen(l.server, l.port, l.host))
    } catch (e) {
      await Promise.all(listeners.slice(0, ports.length).map((o) => new Promise<void>((resolve) => o.server.close(() => resolve()))))
      return err([`${l.name}: cannot listen on ${l.host}:${l.port}: ${(e as Error).message}`])
    }
  }
  return ok(ports)
}

/** Whether a listen address only accepts connections from this host. */
const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)

export async function startDaemon(opts: DaemonOptions): Promise<Result<Daemon, string[]>> {
  const opened = await ConfigStore.open(opts.configFile)
  if (!opened.ok) return err(opened.error)
  const store = opened.value
  const cfg = store.current().config.daemon
  const logger = opts.logger ?? createStdoutLogger(cfg.log.level, { flushMs: cfg.log.flush_ms })
  const runtime = () => store.current()
  // The live calls page's files, read now: a build that did not copy them stops the start (src/ui/).
  const ui = uiRouter({ apiPrefix: cfg.http.prefix })
  if (!ui.ok) return err([`ui: ${ui.error}`])
  // Accepted requests and their results, durable across crashes (docs/callbacks.md "Durability").
  // Opened first: a folder that cannot be used stops the start before anything listens.
  const journaled = await openJournal({
    dir: opts.journalDir ?? journalDirOf(opts.configFile, cfg.journal.dir),
    enabled: cfg.journal.enabled,
    logger: logger.child({ part: 'journal' }),
  })
  if (!journaled.ok) return err([`journal: ${journaled.error}`])
  const journal = journaled.value

  // Two listeners (docs/deploy.md "Listeners"): the API's, and FreeSWITCH's documents on their own
  // (loopback by default: the directory holds every SIP password). Both are made by newServer().
  // Their ports must be known before the simulator starts: it fetches dialplans from us.
  const tls = store.current().config.tls
  const server = newServer(cfg.http, tls)
  const xmlCurlServer = newServer(cfg.http)
  const listening = await listenAll([
    { name: 'http', server, host: cfg.http.host, port: opts.httpPort ?? cfg.http.port },
    { name: 'xml_curl', server: xmlCurlServer, host: cfg.xml_curl.host, port: opts.xmlCurlPort ?? (opts.httpPort === 0 ? 0 : cfg.xml_curl.port) },
  ])
  if (!listening.ok) {
    await journal.close()
    return err(listening.error)
  }
  const [httpPort, xmlCurlPort] = listening.value as [number, number]
  const baseUrl = originOf(cfg.http.host, httpPort, tls === undefined ? 'http' : 'https')
  const xmlCurlBaseUrl = originOf(cfg.xml_curl.host, xmlCurlPort)
  const xmlCurlUrl = `${xmlCurlBaseUrl}${xmlCurlPathOf(cfg)}`

  let simulator: Simulator | undefined
  let eslPort = cfg.freeswitch.port
  if (cfg.freeswitch.mode === 'simulator') {
    simulator = new Simulator({
      domains: store.current().config.domains,
      password: cfg.freeswitch.password,
      sipProfile: cfg.freeswitch.sip_profile,
      xmlCurl: {
        url: xmlCurlUrl,
        username: cfg.xml_curl.username,
        password: cfg.xml_curl.password,
      },
      logger: logger.child({ part: 'sim' }),
      timeScale: opts.simulatorTimeScale ?? 1,
    })
    eslPort = await simulator.listen(opts.simulatorPort ?? cfg.freeswitch.port, cfg.freeswitch.host)
    logger.info({ port: eslPort }, 'built-in FreeSWITCH simulator listening')
  }

  const pbx = connectPbx({
    host: cfg.freeswitch.host,
    port: eslPort,
    password: cfg.freeswitch.password,
    logger: logger.child({ part: 'pbx' }),
    commandTimeoutMs: cfg.freeswitch.command_timeout_ms,
  })
  // Prometheus metrics (src/metrics/): read from the parts at each scrape; subscribed to the link
  // before it can connect, so that only reconnections count as such. The sources' closures run
  // at scrape time only, after every part below exists.
  const metrics = createMetrics({
    prefix: cfg.http.prefix,
    sources: {
      domains: () => store.current().config.domains.map((d) => ({ name: d.name, channelLimit: d.channel_limit })),
      liveChannels: () => {
        const live = new Map<string, number>()
        for (const c of channels.liveChannels()) if (c.domain !== undefined) live.set(c.domain, (live.get(c.domain) ?? 0) + 1)
        return live
      },
      eslConnected: () => pbx.isConnected(),
      callbacks: () => {
        const s = callbacks.stats()
        const b = callbacks.backlog()
        return { queued: s.pending, inFlight: s.inFlight, oldestPendingAt: b.oldestPendingAt, delivered: s.delivered, retried: b.retried, deadLettered: s.failed }
      },
      journal: () => {
        const j = journal.stats()
        return { bytes: j.segmentBytes, deadLetters: j.deadLetters, pendingResults: j.pendingResults, openRequests: j.openRequests, writeErrors: j.writeErrors }
      },
    },
  })
  pbx.onConnected(() => metrics.eslConnected())
  pbx.onEvent((e) => metrics.eslEvent(e))
  // The one table of live channels, fed by FreeSWITCH's events: origination and CTI read it.
  const channels = createChannelModel({
    pbx,
    logger: logger.child({ part: 'channels' }),
    directory: () => store.current().directory,
    commandTimeoutMs: cfg.freeswitch.command_timeout_ms,
  })

  // A node of a cluster (docs/cluster.md), only with a `cluster` section: loaded on demand, so a
  // single node never loads Redis. Its counts are the engine's, bound once the engine exists; its
  // journal is mirrored into Redis for its peers (src/cluster/results.ts).
  let inUseOf = (_domain: string): number => 0
  const cluster: ClusterNode | undefined =
    cfg.cluster === undefined
      ? undefined
      : await (await import('./cluster/index.js')).startCluster(cfg.cluster, {
          apiUrl: baseUrl,
          domains: () => store.current().config.domains.map((d) => d.name),
          localInUse: (d) => inUseOf(d),
          apiPrefix: () => store.current().config.daemon.http.prefix,
          journal,
          logger: logger.child({ part: 'cluster' }),
          // Its box's registrations, published for call_user on other nodes (sofia events subscribed only here).
          box: boxRegistrations(pbx, cfg.freeswitch.command_timeout_ms),
        })
  const resultJournal = cluster?.journal ?? journal

  const callbackTransport = createCallbackTransport(() => store.current().config.daemon.callbacks)
  const callbacks = new CallbackDispatcher({
    settings: () => store.current().config.daemon.callbacks,
    secretFor: (domain) => store.current().directory.domain(domain)?.config.callback_secret,
    // The one outbound transport with callbacks.allow: every attempt's address is checked.
    transport: callbackTransport,
    journal: resultJournal,
    logger: logger.child({ part: 'callbacks' }),
  })
  await callbacks.start()
  // In a cluster: results of dead peers are delivered here (src/cluster/takeover.ts).
  cluster?.takeOver(callbacks)

  const engine = createEngine({
    pbx,
    channels,
    runtime,
    callbacks,
    logger: logger.child({ part: 'engine' }),
    sipProfile: cfg.freeswitch.sip_profile,
    huntConcurrency: cfg.hunt.concurrency_per_domain,
    commandTimeoutMs: cfg.freeswitch.command_timeout_ms,
    ...(cluster !== undefined ? { sharedLimit: cluster.sharedLimit } : {}),
    // Durable before a request's first originate (origination/intents.ts): a crash before the reply loses nothing.
    intents: journalIntents(journal),
    // Under a sped-up simulator the engine's own timers (hunt budget, watchdog) must follow.
    ...(simulator !== undefined ? { timeScale: opts.simulatorTimeScale ?? 1 } : {}),
  })
  inUseOf = (d) => engine.inUse(d)
  // A request without callback_url is over once its outcome is known (with one, its result record ends it).
  engine.onOutcome((o) => void resultJournal.ended(o.requestId))
  // Requests an earlier run accepted without a result: adopted while their legs live, else their
  // legs' records (or outcome_unknown) give the result (origination/recovery.ts). Not awaited: it
  // waits for FreeSWITCH; results already journaled are the dispatcher's own to send again.
  // Idempotency-Key replies of the last 24 h, as the journal kept them across restarts; keys of
  // originates whose reply was never decided wait for recovery (api/unsettled-intents.ts).
  const idempotency = idempotencyStoreOf(journal.replay().idempotencyKeys, cluster !== undefined ? { shared: cluster.idempotency } : {})
  const intents = unsettledIntents(journal, idempotency, journal.replay().unsettledIntents)
  engine.recover(resultJournal.replay().openRequests, intents).catch((e: unknown) => logger.error({ err: e }, 'recovery failed'))

  // Every IVR request goes through the one outbound transport with ivr.fetch_allow, read at each
  // connection (a reload applies to the next one).
  const ivrTransport = createIvrTransport({ allow: () => allowListOf(store.current().config.daemon.ivr.fetch_allow) })
  const fetcher = createFetcher({
    transport: ivrTransport,
    logger: logger.child({ part: 'ivr-fetch' }),
    accept: acceptIvrDocument,
  })
  const ivr = createIvrRunner({ pbx, runtime, fetcher: countingFetcher(fetcher, (kind, outcome) => metrics.ivrFetch(kind, outcome)), logger: logger.child({ part: 'ivr' }), transferGate: engine })

  // One failed-authentication throttle for the API listener: its routes, gen_ws_ticket, the ws_cti upgrade (api/throttle.ts).
  const throttle = new AuthThrottle(() => store.current().config.daemon.http.auth_throttle, logger.child({ part: 'auth-throttle' }))
  // In a cluster the view holds every box's channels; commands go to the channel's node (src/cluster/cti-view.ts).
  const cti = createCti({ runtime, pbx, channels, logger: logger.child({ part: 'cti' }), throttle, ...(cluster !== undefined ? { peers: cluster.ctiPeers } : {}) })
  const app = createApp({
    runtime,
    throttle,
    engine: registeringIvrSources(engine, ivr),
    health: pbx,
    journal: resultJournal,
    // Idempotency-Key replies of the last 24 h, as the journal kept them across restarts.
    idempotency,
    logger: logger.child({ part: 'api' }),
    onRequest: (r) => metrics.request(r),
    ...(cluster !== undefined ? { forwardUnregistered: cluster.forwardUnregistered } : {}),
    routers: [cti.router],
    // No credential compared there: served even to an address the throttle blocks (api/throttle.ts).
    publicRouters: [metricsRouter(metrics), ui.value],
  })
  server.on('request', app.callback())
  // FreeSWITCH's listener has its own throttle (same http.auth_throttle settings, its own
  // counts): a local API client guessing tokens must not lock FreeSWITCH out of its documents.
  const xmlCurlThrottle = new AuthThrottle(() => store.current().config.daemon.http.auth_throttle, logger.child({ part: 'xml_curl-auth-throttle' }))
  const xmlCurlHandler = xmlCurlListener({
    runtime,
    logger: logger.child({ part: 'xml_curl' }),
    ivr,
    // The dialplan bridges a request's destination only while the engine holds channels for it.
    bridgeGate: engine,
    onAnswer: (a) => metrics.xmlCurl(a),
    guard: {
      blocked: (address) => {
        const b = xmlCurlThrottle.blocked(address)
        return b === undefined ? undefined : { status: statusOf(b.error), retryAfterSec: b.retryAfterSec, body: errorBody(b.error) }
      },
      failed: (address, claimed) => xmlCurlThrottle.failed(address, claimed),
    },
  })
  xmlCurlServer.on('request', xmlCurlHandler)
  cti.attach(server)

  store.onReload((r) => simulator?.setDomains(r.config.domains))

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      logger.info('stopping: no new requests; delivering pending callbacks')
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      await cti.close()
      await engine.close()
      channels.close()
      await ivr.close()
      // FreeSWITCH's documents are served until no leg of ours may still ask for one.
      const xmlCurlClosed = new Promise<void>((resolve) => xmlCurlServer.close(() => resolve()))
      xmlCurlServer.closeAllConnections()
      await xmlCurlClosed
      const flushed = await callbacks.shutdown(10_000)
      logger.info(flushed, 'callbacks flushed')
      // After the last acknowledgement is in the node's stream: a peer taking it over later
      // (this node never back) delivers only what was really left.
      await cluster?.close()
      await Promise.all([callbackTransport.close(), ivrTransport.close()])
      await journal.close()
      await pbx.close()
      await simulator?.close()
      metrics.close()
      server.closeAllConnections()
      await closed
      logger.info('stopped')
    })()
    return stopping
  }

  const reload = async (): Promise<Result<void, string[]>> => {
    const r = await store.reload()
    if (!r.ok) {
      logger.error({ problems: r.error }, 'configuration reload refused; the running configuration stays')
      return err(r.error)
    }
    logger.info({ domains: r.value.config.domains.map((d) => d.name) }, 'configuration reloaded')
    const certificate = reloadCertificate(server, r.value.config.tls, logger)
    if (!certificate.ok) {
      logger.error({ problem: certificate.error }, 'TLS certificate reload refused')
      return err([certificate.error])
    }
    return ok(undefined)
  }

  logger.info({ url: baseUrl, xml_curl: xmlCurlUrl, mode: cfg.freeswitch.mode }, 'daemon listening')
  if (tls !== undefined) logger.info({ cert_file: tls.certFile, subject: tls.subject, valid_to: tls.validTo.toISOString() }, 'API listener on HTTPS (TLS 1.2 and later)')
  logger.info({ url: `${baseUrl}${METRICS_PATH}` }, 'Prometheus metrics served (on the API listener, no authentication)')
  if (!isLoopbackHost(cfg.xml_curl.host)) {
    logger.warn({ host: cfg.xml_curl.host }, 'xml_curl listener is not on loopback: it serves every SIP password to whoever has its credentials; firewall it (docs/deploy.md "Listeners")')
  }
  return ok({ store, logger, pbx, simulator, httpPort, baseUrl, xmlCurlPort, xmlCurlBaseUrl, xmlCurlUrl, reload, stop })
}

/**
 * An `xml_url:` destination's document must be known to the IVR runner before the leg is
 * originated: the dialplan hands the answered leg over under the request id, and the
 * xml_curl router accepts that key only if the runner holds it.
 */
function registeringIvrSources(engine: OriginationEngine, ivr: IvrRunner): OriginationEngine {
  return {
    originate(plan) {
      if (plan.destination.kind === 'ivr') ivr.register(plan.domain, plan.requestId, plan.destination.source)
      return engine.originate(plan)
    },
  }
}
