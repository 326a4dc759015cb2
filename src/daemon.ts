/**
 * The composition root: builds every part of the picture in docs/architecture.md and wires them
 * together. main.ts (signals, arguments), the demo, the end-to-end tests and the benchmarks all
 * start the daemon through here, so they exercise exactly what operators run.
 *
 * The parts are one list (`daemonParts` below): each is made from what the parts before it offer
 * and says what it offers and how it stops; they start in the list's order and stop in the
 * reverse (src/util/parts.ts), so the stop order is written nowhere else. Two pairs of parts need
 * each other; each is broken by a `forwardPort` made by the earlier part, and says why there.
 * At about 400 lines it is longer than a module should be, on purpose: the list is read top to
 * bottom as the start order, and cutting it into files would scatter the one place it is written.
 */
import { join } from 'node:path'
import { ConfigStore } from './runtime/store.js'
import type { Logger } from './util/logger.js'
import { createStdoutLogger } from './util/logger.js'
import { createApp } from './api/app.js'
import { registeringIvrSources } from './api/registering-engine.js'
import { AuthThrottle } from './api/throttle.js'
import { idempotencyStoreOf } from './api/idempotency.js'
import { unsettledIntents } from './api/unsettled-intents.js'
import { journalIntents } from './origination/intents.js'
import { connectPbx } from './pbx/connection.js'
import { boxRegistrations } from './pbx/box-registrations.js'
import { createChannelModel } from './channels/index.js'
import { createCallHistory } from './channels/call-history.js'
import { createChannelSamples } from './channels/channel-samples.js'
import { createEngine } from './origination/engine.js'
import { CallbackDispatcher } from './callbacks/dispatcher.js'
import { journalDirOf, openJournal } from './journal/index.js'
import { recordingDirOf } from './config/recording-dir.js'
import { followRecordings } from './recording/follow.js'
import { followTickets } from './callbacks/tickets.js'
import { followStatusEvents } from './callbacks/status-events.js'
import * as commands from './pbx/commands.js'
import { systemClock } from './util/clock.js'
import { openRecordingStore } from './recording/store.js'
import { xmlCurlListener } from './xmlcurl/listener.js'
import { originOf, xmlCurlPathOf } from './config/endpoints.js'
import { errorBody, statusOf } from './api/errors.js'
import { createCti } from './cti/index.js'
import { uiRouter } from './ui/router.js'
import { Simulator } from './sim/index.js'
import type { PbxClient } from './pbx/types.js'
import { createIvrRunner, acceptIvrDocument } from './ivr/runner/index.js'
import { createFetcher, createIvrTransport } from './ivr/fetch/fetcher.js'
import { allowListOf } from './net/allow-list.js'
import { isLoopbackHost, listenOn, newServer } from './net/listeners.js'
import { reloadCertificate } from './net/tls.js'
import { createCallbackTransport } from './callbacks/transport.js'
import { err, ok, type Result } from './util/result.js'
import { forwardPort, Parts } from './util/parts.js'
import { countingFetcher, createMetrics, metricsRouter, METRICS_PATH, type CallbackFigures, type WaitingFigures } from './metrics/index.js'
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
  /**
   * The recordings' folder instead of `recording.dir`. Absent with `journalDir` given and no
   * `recording.dir`: `recordings` inside that journal folder (a run's own, like the journal).
   */
  recordingDir?: string
  /** How often the live calls page's channel samples are taken instead of every 10 s (tests: a chart without waiting). */
  channelSampleIntervalMs?: number
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

/** Read by the metrics before the callbacks exist (metrics part below): nothing yet. */
const NO_CALLBACKS: CallbackFigures = { queued: 0, inFlight: 0, oldestPendingAt: undefined, delivered: 0, retried: 0, deadLettered: 0 }

/**
 * The daemon's parts in start order; they stop in the reverse. Read from the bottom up, that is
 * the graceful stop (SIGTERM; deploy/systemd/cod.service and cli/start.ts give its bounds): no new
 * API request, CTI closed, IVR legs ended, ringing calls cancelled and reported, callbacks
 * flushed (10 s), the cluster left, the outbound transports, the channel model, the ESL link, the
 * simulator and the metrics closed, then the listeners, the recordings' hourly sweep, and last the
 * journal, which nothing writes once the listeners are closed.
 */
function daemonParts({ opts, store, logger }: { opts: DaemonOptions; store: ConfigStore; logger: Logger }) {
  const cfg = store.current().config.daemon
  const runtime = () => store.current()
  const tls = store.current().config.tls
  return (
    Parts.list()
      // The live calls page's files, read now: a build that did not copy them stops the start (src/ui/).
      .then('ui', () => {
        const ui = uiRouter({ apiPrefix: cfg.http.prefix })
        return ui.ok ? ok({ offers: { ui: ui.value } }) : err([`ui: ${ui.error}`])
      })
      // Accepted requests and their results, durable across crashes (docs/callbacks.md "Durability").
      // Opened before anything listens: a folder that cannot be used stops the start there.
      .then('journal', async () => {
        const journaled = await openJournal({
          dir: opts.journalDir ?? journalDirOf(opts.configFile, cfg.journal.dir),
          enabled: cfg.journal.enabled,
          logger: logger.child({ part: 'journal' }),
        })
        if (!journaled.ok) return err([`journal: ${journaled.error}`])
        const journal = journaled.value
        return ok({ offers: { journal }, stop: () => journal.close() })
      })
      // The recordings on disk (docs/recording.md): their folder made or the start stops, the records
      // read back, the retention sweep run now and every hour until the stop.
      .then('recordings', async () => {
        // A journal folder of a test's or the demo's own holds their recordings too (in `recordings`
        // inside it), so that a run never shares them with another and they go with that folder.
        const dir =
          opts.recordingDir ??
          (opts.journalDir !== undefined && cfg.recording.dir === undefined
            ? join(opts.journalDir, 'recordings')
            : recordingDirOf(opts.configFile, cfg.recording.dir, journalDirOf(opts.configFile, cfg.journal.dir)))
        const opened = await openRecordingStore({
          dir,
          logger: logger.child({ part: 'recordings' }),
          retentionDaysOf: (domain) => store.current().directory.domain(domain)?.config.recording.retention_days,
        })
        if (!opened.ok) return err([`recording.dir: ${opened.error}`])
        const recordings = opened.value
        return ok({ offers: { recordings }, stop: () => recordings.close() })
      })
      // Two listeners (docs/deploy.md "Listeners"): the API's, and FreeSWITCH's documents on their own
      // (loopback by default: the directory holds every SIP password). Both listen before the parts
      // that serve on them are made: their ports must be known before the simulator starts (it fetches
      // dialplans from us). Closed near the end: the xml_curl one serves FreeSWITCH's documents until
      // no leg of ours may still ask for one; the API's stopped accepting first (part 'api').
      .then('api listener', async () => {
        const server = newServer(cfg.http, tls)
        const listening = await listenOn('http', server, cfg.http.host, opts.httpPort ?? cfg.http.port)
        if (!listening.ok) return listening
        const api = listening.value
        const baseUrl = originOf(cfg.http.host, api.port, tls === undefined ? 'http' : 'https')
        return ok({ offers: { server, apiListener: api, httpPort: api.port, baseUrl }, stop: () => api.close() })
      })
      .then('xml_curl listener', async () => {
        const xmlCurlServer = newServer(cfg.http)
        const port = opts.xmlCurlPort ?? (opts.httpPort === 0 ? 0 : cfg.xml_curl.port)
        const listening = await listenOn('xml_curl', xmlCurlServer, cfg.xml_curl.host, port)
        if (!listening.ok) return listening
        const xmlCurl = listening.value
        const xmlCurlBaseUrl = originOf(cfg.xml_curl.host, xmlCurl.port)
        const offers = { xmlCurlServer, xmlCurlPort: xmlCurl.port, xmlCurlBaseUrl, xmlCurlUrl: `${xmlCurlBaseUrl}${xmlCurlPathOf(cfg)}` }
        return ok({ offers, stop: () => xmlCurl.close() })
      })
      // Prometheus metrics (src/metrics/): counters fed by the parts' hooks, gauges read at each scrape.
      // Made before the ESL link, to be subscribed before it can connect (only reconnections count as
      // such); but they read parts made after the link (channels, callbacks). Those parts bind their
      // readings into these ports as they start; no scrape can come earlier, as the API serves only
      // once the last part started.
      .then('metrics', ({ journal, recordings }) => {
        const readings = {
          liveChannels: forwardPort((): ReadonlyMap<string, number> => new Map()),
          eslConnected: forwardPort(() => false),
          callbacks: forwardPort(() => NO_CALLBACKS),
          waits: forwardPort((): WaitingFigures => ({ waiting: new Map(), ended: { taken: 0, timeout: 0, full: 0, abandoned: 0 }, waitedMs: 0 })),
        }
        const metrics = createMetrics({
          prefix: cfg.http.prefix,
          sources: {
            domains: () => store.current().config.domains.map((d) => ({ name: d.name, channelLimit: d.channel_limit })),
            liveChannels: readings.liveChannels.call,
            eslConnected: readings.eslConnected.call,
            callbacks: readings.callbacks.call,
            journal: () => {
              const j = journal.stats()
              return { bytes: j.segmentBytes, deadLetters: j.deadLetters, pendingResults: j.pendingResults, openRequests: j.openRequests, writeErrors: j.writeErrors }
            },
            recordings: () => recordings.stats(),
            waits: readings.waits.call,
          },
        })
        return ok({ offers: { metrics, readings }, stop: () => metrics.close() })
      })
      .then<{ simulator: Simulator | undefined; eslPort: number }>('simulator', async ({ xmlCurlUrl }) => {
        if (cfg.freeswitch.mode !== 'simulator') return ok({ offers: { simulator: undefined, eslPort: cfg.freeswitch.port } })
        const simulator = new Simulator({
          domains: store.current().config.domains,
          password: cfg.freeswitch.password,
          sipProfile: cfg.freeswitch.sip_profile,
          xmlCurl: { url: xmlCurlUrl, username: cfg.xml_curl.username, password: cfg.xml_curl.password },
          logger: logger.child({ part: 'sim' }),
          timeScale: opts.simulatorTimeScale ?? 1,
        })
        const eslPort = await simulator.listen(opts.simulatorPort ?? cfg.freeswitch.port, cfg.freeswitch.host)
        logger.info({ port: eslPort }, 'built-in FreeSWITCH simulator listening')
        store.onReload((r) => simulator.setDomains(r.config.domains))
        return ok({ offers: { simulator, eslPort }, stop: () => simulator.close() })
      })
      .then('pbx', ({ eslPort, metrics, readings }) => {
        const pbx = connectPbx({
          host: cfg.freeswitch.host,
          port: eslPort,
          password: cfg.freeswitch.password,
          logger: logger.child({ part: 'pbx' }),
          commandTimeoutMs: cfg.freeswitch.command_timeout_ms,
        })
        pbx.onConnected(() => metrics.eslConnected())
        pbx.onEvent((e) => metrics.eslEvent(e))
        readings.eslConnected.bind(() => pbx.isConnected())
        return ok({ offers: { pbx }, stop: () => pbx.close() })
      })
      // The one table of live channels, fed by FreeSWITCH's events: origination and CTI read it.
      // Made right after the link (no wait on I/O between the two: the link cannot be connected yet),
      // so that it sees the first connection and its re-read of the channels.
      .then('channels', ({ pbx, readings }) => {
        const channels = createChannelModel({
          pbx,
          logger: logger.child({ part: 'channels' }),
          directory: () => store.current().directory,
          commandTimeoutMs: cfg.freeswitch.command_timeout_ms,
        })
        readings.liveChannels.bind(() => {
          const live = new Map<string, number>()
          for (const c of channels.liveChannels()) if (c.domain !== undefined) live.set(c.domain, (live.get(c.domain) ?? 0) + 1)
          return live
        })
        return ok({ offers: { channels }, stop: () => channels.close() })
      })
      // What the live calls page shows besides the live channels: the last finished calls and the
      // live channels against the limit over the last hour, both kept from the one channel model.
      .then('call history', ({ channels }) => {
        const callHistory = createCallHistory({ channels })
        const channelSamples = createChannelSamples({
          channels,
          domains: () => store.current().config.domains.map((d) => ({ name: d.name, channelLimit: d.channel_limit })),
          clock: systemClock,
          now: Date.now,
          ...(opts.channelSampleIntervalMs !== undefined ? { intervalMs: opts.channelSampleIntervalMs } : {}),
        })
        return ok({
          offers: { callHistory, channelSamples },
          stop: () => {
            channelSamples.stop()
            callHistory.close()
          },
        })
      })
      // The outbound transports to client-named URLs: callbacks (callbacks.allow) and IVR documents
      // (ivr.fetch_allow), each allow list read at each connection (a reload applies to the next one).
      .then('outbound transports', () => {
        const callbackTransport = createCallbackTransport(() => store.current().config.daemon.callbacks)
        const ivrTransport = createIvrTransport({ allow: () => allowListOf(store.current().config.daemon.ivr.fetch_allow) })
        return ok({ offers: { callbackTransport, ivrTransport }, stop: () => Promise.all([callbackTransport.close(), ivrTransport.close()]).then(() => undefined) })
      })
      // A node of a cluster (docs/cluster.md), only with a `cluster` section: loaded on demand, so a
      // single node never loads Redis. It and the engine need each other: the engine admits calls
      // through the cluster's shared limit, and the cluster publishes the engine's counts in its
      // lease (renewed once already during this start). So the counts come through `engineCounts`,
      // 0 until the engine binds them, as before it exists nothing is in use.
      .then('cluster', async ({ baseUrl, journal, pbx }) => {
        const engineCounts = forwardPort((_domain: string): number => 0)
        // Two views of the one journal: `journal`, this node's files (originate intents and
        // Idempotency-Key replies stay with the node), and `resultJournal`, the one accepted
        // requests and results are written through: in a cluster the same journal wrapped by
        // cluster/results.ts, which mirrors them into Redis for the peers that take over a dead node.
        if (cfg.cluster === undefined) return ok({ offers: { cluster: undefined as ClusterNode | undefined, resultJournal: journal, engineCounts } })
        const cluster = await (await import('./cluster/index.js')).startCluster(cfg.cluster, {
          apiUrl: baseUrl,
          domains: () => store.current().config.domains.map((d) => d.name),
          localInUse: engineCounts.call,
          apiPrefix: () => store.current().config.daemon.http.prefix,
          journal,
          logger: logger.child({ part: 'cluster' }),
          // Its box's registrations, published for call_user on other nodes (sofia events subscribed only here).
          box: boxRegistrations(pbx, cfg.freeswitch.command_timeout_ms),
        })
        // Stopped after the callbacks' last acknowledgement is in the node's stream: a peer taking it
        // over later (this node never back) delivers only what was really left.
        return ok({ offers: { cluster: cluster as ClusterNode | undefined, resultJournal: cluster.journal, engineCounts }, stop: () => cluster.close() })
      })
      .then('callbacks', async ({ callbackTransport, resultJournal, cluster, readings }) => {
        const callbacks = new CallbackDispatcher({
          settings: () => store.current().config.daemon.callbacks,
          // Notices of a group's ticket_webhook name their signer (callbacks/tickets.ts); everything else is the domain's.
          secretFor: (domain, signer) => {
            const dom = store.current().directory.domain(domain)
            if (signer === undefined) return dom?.config.callback_secret
            const group = signer.startsWith('ticket:') ? dom?.groupsBy('group_name', signer.slice('ticket:'.length))[0] : undefined
            return group?.ticket_webhook?.secret
          },
          // The one outbound transport with callbacks.allow: every attempt's address is checked.
          transport: callbackTransport,
          journal: resultJournal,
          logger: logger.child({ part: 'callbacks' }),
        })
        await callbacks.start()
        // In a cluster: results of dead peers are delivered here (src/cluster/takeover.ts).
        cluster?.takeOver(callbacks)
        readings.callbacks.bind(() => {
          const s = callbacks.stats()
          const b = callbacks.backlog()
          return { queued: s.pending, inFlight: s.inFlight, oldestPendingAt: b.oldestPendingAt, delivered: s.delivered, retried: b.retried, deadLettered: s.failed }
        })
        const stop = async () => {
          // Pending callbacks delivered for up to 10 s; the rest stays in the journal.
          const flushed = await callbacks.shutdown(10_000)
          logger.info(flushed, 'callbacks flushed')
        }
        return ok({ offers: { callbacks }, stop })
      })
      .then('engine', ({ pbx, channels, callbacks, cluster, engineCounts, journal, resultJournal, simulator, readings }) => {
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
        engineCounts.bind((d) => engine.inUse(d))
        readings.waits.bind(() => engine.waitFigures())
        // A request without callback_url is over once its outcome is known (with one, its result record ends it).
        engine.onOutcome((o) => void resultJournal.ended(o.requestId))
        // Idempotency-Key replies of the last 24 h, as the journal kept them across restarts; keys of
        // originates whose reply was never decided wait for recovery (api/unsettled-intents.ts).
        const idempotency = idempotencyStoreOf(journal.replay().idempotencyKeys, cluster !== undefined ? { shared: cluster.idempotency } : {})
        const intents = unsettledIntents(journal, idempotency, journal.replay().unsettledIntents)
        // Requests an earlier run accepted without a result: adopted while their legs live, else their
        // legs' records (or outcome_unknown) give the result (origination/recovery.ts). Not awaited: it
        // waits for FreeSWITCH; results already journaled are the dispatcher's own to send again.
        engine.recover(resultJournal.replay().openRequests, intents).catch((e: unknown) => logger.error({ err: e }, 'recovery failed'))
        // Calls still ringing are cancelled and reported (up to 2 s).
        return ok({ offers: { engine, idempotency }, stop: () => engine.close() })
      })
      // Recordings as FreeSWITCH reports them (RECORD_START/STOP, a refused write), kept in the store
      // and POSTed to their callback (src/recording/follow.ts). Stopped before the engine.
      .then('recording follower', ({ pbx, engine, callbacks, recordings }) => {
        const follower = followRecordings({
          store: recordings,
          onEvent: (l) => pbx.onEvent(l),
          onAccepted: (l) => engine.onAccepted(l),
          domainCallbackUrl: (domain) => store.current().directory.domain(domain)?.config.recording.callback_url,
          notify: (domain, url, body, meta) => void callbacks.notify(domain, url, body, meta),
          logger: logger.child({ part: 'recordings' }),
        })
        // Records an earlier run left `recording`: settled once FreeSWITCH says their leg is gone
        // (asked every 5 s while it cannot be asked or a leg still lives, for at most an hour).
        const legExists = async (uuid: string): Promise<boolean | undefined> => {
          const cmd = commands.uuidExists(uuid)
          if (!cmd.ok || !pbx.isConnected()) return cmd.ok ? undefined : false
          const r = await pbx.api(cmd.value, cfg.freeswitch.command_timeout_ms)
          return r.ok ? r.value.trim() === 'true' : undefined
        }
        let tries = 0
        let stopped = false
        let stopSettling: () => void = () => undefined
        const settle = (): void => {
          void follower.settleUnfinished(legExists).then((left) => {
            if (left > 0 && ++tries < 720 && !stopped) stopSettling = systemClock.after(5000, settle)
          })
        }
        stopSettling = systemClock.after(0, settle)
        return ok({
          offers: { follower },
          stop: () => {
            stopped = true
            stopSettling()
            follower.close()
          },
        })
      })
      // A group's ticketing system hears of each call made for the group (callbacks/tickets.ts), and a
      // request's status_callback_url of its call's life (callbacks/status-events.ts).
      .then('call notices', ({ engine, channels, callbacks, resultJournal }) => {
        const tickets = followTickets({
          onAccepted: (l) => engine.onAccepted(l),
          onOutcome: (l) => engine.onOutcome(l),
          channels,
          webhookOf: (domain, groupName) => store.current().directory.domain(domain)?.groupsBy('group_name', groupName)[0]?.ticket_webhook?.url,
          notify: (domain, url, body, meta) => void callbacks.notify(domain, url, body, meta),
          logger: logger.child({ part: 'tickets' }),
        })
        // A request's status events (callbacks/status-events.ts), from the same channel model.
        // Requests an earlier run was following are taken up where their journal records stop; a
        // request still open gets its result from recovery (engine.recover above).
        const replay = resultJournal.replay()
        const open = new Set(replay.openRequests.map((r) => r.requestId))
        const status = followStatusEvents({
          onAccepted: (l) => engine.onAccepted(l),
          onOutcome: (l) => engine.onOutcome(l),
          channels,
          notify: (domain, url, body, meta) => void callbacks.notify(domain, url, body, meta),
          resume: { following: replay.statusFollowing ?? [], settled: (requestId) => !open.has(requestId) },
          followed: (requestId) => void resultJournal.followed(requestId),
          logger: logger.child({ part: 'status-events' }),
        })
        return ok({
          offers: {},
          stop: () => {
            tickets.close()
            status.close()
          },
        })
      })
      // Parked legs run their IVR documents; a Transfer asks the engine's gate. Ended before the engine:
      // a leg not bridged to anyone is hung up (a bridged one is left to FreeSWITCH).
      .then('ivr', ({ ivrTransport, metrics, pbx, engine, recordings }) => {
        const fetcher = createFetcher({ transport: ivrTransport, logger: logger.child({ part: 'ivr-fetch' }), accept: acceptIvrDocument })
        const counted = countingFetcher(fetcher, (kind, outcome) => metrics.ivrFetch(kind, outcome))
        // <Record> keeps its files in the one recording store (docs/ivr.md "Record").
        const ivr = createIvrRunner({ pbx, runtime, fetcher: counted, logger: logger.child({ part: 'ivr' }), transferGate: engine, recordings })
        return ok({ offers: { ivr }, stop: () => ivr.close() })
      })
      .then('cti', ({ pbx, channels, cluster, recordings }) => {
        // One failed-authentication throttle for the API listener: its routes, gen_ws_ticket, the ws_cti upgrade (api/throttle.ts).
        const throttle = new AuthThrottle(() => store.current().config.daemon.http.auth_throttle, logger.child({ part: 'auth-throttle' }))
        // In a cluster the view holds every box's channels; commands go to the channel's node (src/cluster/cti-view.ts).
        const cti = createCti({ runtime, pbx, channels, recordings, logger: logger.child({ part: 'cti' }), throttle, ...(cluster !== undefined ? { peers: cluster.ctiPeers } : {}) })
        return ok({ offers: { cti, throttle }, stop: () => cti.close() })
      })
      // FreeSWITCH's documents, served on the xml_curl listener (closed with it: 'xml_curl listener').
      .then('xml_curl documents', ({ xmlCurlServer, ivr, engine, metrics, recordings, follower }) => {
        // Its own throttle (same http.auth_throttle settings, its own counts): a local API client
        // guessing tokens must not lock FreeSWITCH out of its documents.
        const xmlCurlThrottle = new AuthThrottle(() => store.current().config.daemon.http.auth_throttle, logger.child({ part: 'xml_curl-auth-throttle' }))
        const handler = xmlCurlListener({
          runtime,
          logger: logger.child({ part: 'xml_curl' }),
          ivr,
          // The dialplan bridges a request's destination only while the engine holds channels for it.
          bridgeGate: engine,
          // Answered legs that carry a recording id record into the store's folder (xmlcurl/recording.ts).
          recording: {
            recordingFile: (domain, id) => recordings.recordingFile(domain, id),
            recordingRefused: (domain, id, reason) => follower.refused(domain, id, reason),
          },
          onAnswer: (a) => metrics.xmlCurl(a),
          guard: {
            blocked: (address) => {
              const b = xmlCurlThrottle.blocked(address)
              return b === undefined ? undefined : { status: statusOf(b.error), retryAfterSec: b.retryAfterSec, body: errorBody(b.error) }
            },
            failed: (address, claimed) => xmlCurlThrottle.failed(address, claimed),
          },
        })
        xmlCurlServer.on('request', handler)
        return ok({ offers: {} })
      })
      // The API, CTI's WebSocket upgrade included, on the API listener: served last, stopped first.
      .then('api', ({ server, apiListener, engine, ivr, pbx, resultJournal, idempotency, metrics, cluster, cti, throttle, ui, recordings, callHistory, channelSamples }) => {
        const app = createApp({
          runtime,
          throttle,
          // The engine as the API sees it: an IVR destination's document registered first (api/registering-engine.ts).
          engine: registeringIvrSources(engine, ivr),
          health: pbx,
          journal: resultJournal,
          idempotency,
          recordings,
          calls: cti.calls,
          recent: { history: callHistory, samples: channelSamples },
          logger: logger.child({ part: 'api' }),
          onRequest: (r) => metrics.request(r),
          ...(cluster !== undefined ? { forwardUnregistered: cluster.forwardUnregistered } : {}),
          routers: [cti.router],
          // No credential compared there: served even to an address the throttle blocks (api/throttle.ts).
          publicRouters: [metricsRouter(metrics), ui],
        })
        server.on('request', app.callback())
        cti.attach(server)
        // No new request; those under way finish (their connections are cut when the listener closes).
        return ok({ offers: {}, stop: () => apiListener.stopAccepting() })
      })
  )
}

export async function startDaemon(opts: DaemonOptions): Promise<Result<Daemon, string[]>> {
  const opened = await ConfigStore.open(opts.configFile)
  if (!opened.ok) return err(opened.error)
  const store = opened.value
  const cfg = store.current().config.daemon
  const logger = opts.logger ?? createStdoutLogger(cfg.log.level, { flushMs: cfg.log.flush_ms })
  const started = await daemonParts({ opts, store, logger }).start(logger)
  if (!started.ok) return started
  const { made, stop: stopParts } = started.value
  const { server, baseUrl, xmlCurlUrl } = made

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      logger.info('stopping: no new requests; delivering pending callbacks')
      await stopParts()
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

  const tls = store.current().config.tls
  logger.info({ url: baseUrl, xml_curl: xmlCurlUrl, mode: cfg.freeswitch.mode }, 'daemon listening')
  if (tls !== undefined) logger.info({ cert_file: tls.certFile, subject: tls.subject, valid_to: tls.validTo.toISOString() }, 'API listener on HTTPS (TLS 1.2 and later)')
  logger.info({ url: `${baseUrl}${METRICS_PATH}` }, 'Prometheus metrics served (on the API listener, no authentication)')
  if (!isLoopbackHost(cfg.xml_curl.host)) {
    logger.warn({ host: cfg.xml_curl.host }, 'xml_curl listener is not on loopback: it serves every SIP password to whoever has its credentials; firewall it (docs/deploy.md "Listeners")')
  }
  const { pbx, simulator, httpPort, xmlCurlPort, xmlCurlBaseUrl } = made
  return ok({ store, logger, pbx, simulator, httpPort, baseUrl, xmlCurlPort, xmlCurlBaseUrl, xmlCurlUrl, reload, stop })
}
