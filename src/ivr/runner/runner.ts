/**
 * The XML IVR runner: holds the IVR sources of API requests until their leg is answered, and
 * runs one session per channel that our dialplan parked for the IVR (call.ts says which).
 *
 * One listener on the PbxClient serves every session (CHANNEL_PARK starts one, CHANNEL_ANSWER
 * and CHANNEL_BRIDGE inform it, CHANNEL_HANGUP stops it), so a session leaves no listener behind.
 * A channel gets one session: a later CHANNEL_PARK of the same channel (while a session runs,
 * or after it ended and before CHANNEL_DESTROY) is ignored.
 *
 * Wiring (see the report in the module index): the origination engine calls `register` for an
 * `xml_url:` destination before it originates (the channel then carries the request id as
 * `cod_ivr_request`), and the xml_curl router's IvrHandoff is this runner (`has`).
 */
import type { Runtime } from '../../runtime/store.js'
import type { IvrSource } from '../source.js'
import { uuidGetVar, uuidKill } from '../../pbx/commands.js'
import type { FsEvent, PbxClient } from '../../pbx/types.js'
import type { Logger } from '../../util/logger.js'
import { err, ok, type Result } from '../../util/result.js'
import type { IvrHandoff } from '../../xmlcurl/router.js'
import { parseIvrDocument } from '../document/parse.js'
import type { IvrFetcher } from '../fetch/fetcher.js'
import type { ElementTable } from '../elements/index.js'
import { readParkedCall, type ParkedCall } from './call.js'
import { SourceRegistry } from './registry.js'
import type { InitialDocument } from './documents.js'
import { FAILURE_CAUSE, IvrSession } from './session.js'
import type { TransferGate } from '../transfer-gate.js'
import type { AsrSettings, IvrRecordingStore } from '../recordings.js'
import { faxDirOf } from '../fax/fax-dir.js'
import { startFaxRetention } from '../fax/retention.js'
import { systemClock, type Clock } from '../../util/clock.js'

export interface IvrRunnerDeps {
  readonly pbx: PbxClient
  readonly runtime: () => Runtime
  /** Create it with `accept: acceptIvrDocument` so that an invalid document makes the next fallback URL be tried. */
  readonly fetcher: IvrFetcher
  readonly logger: Logger
  /** The clock of hour()/weekday()/date(); default the system clock. */
  readonly now?: () => Date
  /** How long a registered source waits for its leg (default 2 h). */
  readonly sourceTtlMs?: number
  readonly maxSources?: number
  /** Element modules (tests). */
  readonly elements?: ElementTable
  /** The channel limit's say on a Transfer (the origination engine). */
  readonly transferGate?: TransferGate
  /** The recording store `<Record>` keeps its files in (the daemon's, src/recording/). */
  readonly recordings?: IvrRecordingStore
  /** The clock of the received faxes' hourly sweep (src/ivr/fax/retention.ts); default the system's. */
  readonly clock?: Clock
}

export interface IvrRunner extends IvrHandoff {
  /** An `xml_url:` source of an API request, under its key (the request id), until taken or expired. */
  register(domain: string, key: string, source: IvrSource, ttlMs?: number): void
  has(domain: string, key: string): boolean
  activeSessions(): number
  /** Stops listening, stops every session (their calls are hung up) and waits for them. */
  close(): Promise<void>
}

/** For createFetcher's `accept`: a body is a document only if it validates. */
export const acceptIvrDocument = (body: string): Result<unknown, string> => {
  const r = parseIvrDocument(body)
  return r.ok ? ok(r.value) : err(r.error.reason)
}

/** uuids whose session ended, kept until CHANNEL_DESTROY (bounded: oldest out). */
const MAX_ENDED = 10_000

export function createIvrRunner(deps: IvrRunnerDeps): IvrRunner {
  const log = deps.logger.child({ part: 'ivr' })
  const now = deps.now ?? (() => new Date())
  const registry = new SourceRegistry({
    ...(deps.sourceTtlMs !== undefined ? { ttlMs: deps.sourceTtlMs } : {}),
    ...(deps.maxSources !== undefined ? { maxEntries: deps.maxSources } : {}),
    now: () => now().getTime(),
  })
  const sessions = new Map<string, IvrSession>()
  const running = new Set<Promise<void>>()
  const ended = new Set<string>()
  /**
   * Sessions that ended before their call did (a Transfer that connected, or the session hung
   * up itself): the document's URL is told `completed` at the channel's CHANNEL_HANGUP.
   */
  const awaitingHangup = new Map<string, IvrSession>()
  const completions = new Set<Promise<void>>()
  let closed = false

  const complete = (session: IvrSession): void => {
    const p = session.complete().finally(() => completions.delete(p))
    completions.add(p)
  }

  // Received faxes past ivr.fax_retention_days go, now and hourly (read at each sweep: SIGHUP applies).
  const faxSettings = () => {
    const { config } = deps.runtime()
    return { root: faxDirOf(config.file, config.daemon.ivr.fax_dir), retentionDays: config.daemon.ivr.fax_retention_days }
  }
  const faxRetention = startFaxRetention({ settings: faxSettings, clock: deps.clock ?? systemClock, wallNow: () => now().getTime(), logger: log })

  const initialDocument = (parked: ParkedCall): InitialDocument => {
    if (parked.source.kind === 'url') return { kind: 'urls', urls: [parked.source.url] }
    const source = registry.take(parked.domain.name, parked.source.key)
    if (source === undefined) return { kind: 'none', reason: `no IVR document is registered under ${parked.source.key} (expired?)` }
    return source.kind === 'inline' ? { kind: 'inline', xml: source.xml } : { kind: 'urls', urls: source.urls }
  }

  const start = (e: FsEvent): void => {
    const parked = readParkedCall(e, deps.runtime().directory)
    if (parked === undefined) return
    const uuid = e['Unique-ID'] ?? ''
    if (sessions.has(uuid) || ended.has(uuid)) return
    if (!parked.ok) {
      // Ours, but nothing can run: the channel must not stay parked forever.
      log.warn({ uuid, reason: parked.error }, 'ivr channel refused')
      const kill = uuidKill(uuid, FAILURE_CAUSE)
      if (kill.ok) void deps.pbx.bgapi(kill.value, 5000)
      return
    }
    const p = parked.value
    const { ivr, http } = deps.runtime().config.daemon
    const asr: AsrSettings | undefined = ivr.asr.engine === undefined ? undefined : { engine: ivr.asr.engine, grammar: ivr.asr.grammar, params: ivr.asr.params }
    const session = new IvrSession({
      uuid: p.uuid,
      domain: p.domain,
      call: p.call,
      answered: p.answered,
      leg: p.leg,
      pbx: deps.pbx,
      fetcher: deps.fetcher,
      logger: log,
      now,
      // Read per call, so a reload (SIGHUP) applies to the next session.
      mediaDir: ivr.media_dir,
      apiPrefix: http.prefix,
      faxDir: faxDirOf(deps.runtime().config.file, ivr.fax_dir),
      ...(asr !== undefined ? { asr } : {}),
      ...(deps.recordings !== undefined ? { recordings: deps.recordings } : {}),
      ...(deps.elements !== undefined ? { elements: deps.elements } : {}),
      ...(deps.transferGate !== undefined ? { transferGate: deps.transferGate } : {}),
    })
    sessions.set(p.uuid, session)
    const done = session.run(initialDocument(p)).finally(() => {
      sessions.delete(p.uuid)
      running.delete(done)
      if (session.hungUp()) complete(session)
      else if (session.signal.reason !== 'shutdown') {
        awaitingHangup.set(p.uuid, session)
        if (awaitingHangup.size > MAX_ENDED) awaitingHangup.delete(awaitingHangup.keys().next().value ?? '')
      }
      ended.add(p.uuid)
      if (ended.size > MAX_ENDED) {
        const oldest = ended.values().next()
        if (oldest.done !== true) ended.delete(oldest.value)
      }
    })
    running.add(done)
  }

  const onEvent = (e: FsEvent): void => {
    if (closed) return
    const uuid = e['Unique-ID'] ?? ''
    switch (e['Event-Name']) {
      case 'CHANNEL_PARK':
        start(e)
        break
      case 'CHANNEL_ANSWER':
        sessions.get(uuid)?.onAnswer(e)
        break
      case 'CHANNEL_BRIDGE': {
        // One event per bridge, fired on the A leg (test/fixtures/freeswitch/esl/18-uuid-bridge.txt
        // and 19-originate-xml-default.txt); the IVR channel may be either.
        const legs = new Set([uuid, e['Bridge-A-Unique-ID'], e['Bridge-B-Unique-ID'], e['Other-Leg-Unique-ID']])
        for (const leg of legs) if (leg !== undefined) sessions.get(leg)?.onBridge()
        break
      }
      case 'CHANNEL_HANGUP': {
        sessions.get(uuid)?.onHangup(e)
        const finished = awaitingHangup.get(uuid)
        if (finished !== undefined) {
          awaitingHangup.delete(uuid)
          finished.onHangup(e)
          complete(finished)
        }
        break
      }
      case 'CHANNEL_DESTROY':
        ended.delete(uuid)
        awaitingHangup.delete(uuid)
        break
    }
  }

  /**
   * After an ESL reconnect, events of the outage are lost: a caller who hung up meanwhile would
   * leave its session waiting. Every session's channel is looked up (`uuid_getvar`, which
   * answers `-ERR No such channel!` for a channel that is gone: mod_commands.c).
   */
  const resync = async (): Promise<void> => {
    for (const [uuid, session] of [...sessions]) {
      const cmd = uuidGetVar(uuid, 'uuid')
      if (!cmd.ok) continue
      const r = await deps.pbx.bgapi(cmd.value, 5000)
      if (r.ok && r.value.startsWith('-ERR')) {
        log.info({ uuid }, 'ivr channel gone during an ESL outage')
        // Its CHANNEL_HANGUP was lost: the call ended about now.
        session.onHangup({})
      }
    }
  }

  const off = deps.pbx.onEvent(onEvent)
  const offConnected = deps.pbx.onConnected(() => {
    if (!closed && sessions.size > 0) void resync()
  })

  return {
    register: (domain, key, source, ttlMs) => registry.register(domain, key, source, ttlMs),
    has: (domain, key) => registry.has(domain, key),
    activeSessions: () => sessions.size,
    async close() {
      if (closed) return
      closed = true
      off()
      offConnected()
      for (const s of sessions.values()) s.stop('shutdown')
      await Promise.all([...running])
      awaitingHangup.clear()
      await faxRetention.stop()
      await Promise.all([...completions])
    },
  }
}
