/**
 * The inbound Event Socket connection to FreeSWITCH, over esl-lite's FreeSwitchClient.
 *
 * What esl-lite does by itself (node_modules/esl-lite/esl-lite.mjs): connects, reconnects after
 * a drop (at once after a close, with a growing pause up to 1 s after a refused connection),
 * authenticates on every `auth/request`, re-sends its `event json` subscriptions, writes one
 * command at a time, and re-queues the commands that had no reply yet on every new socket. What
 * it does not do is say whether the link is alive, nor let a command be taken back. So, here:
 *
 * - Health (src/pbx/link-health.ts judges; this file feeds it): the socket's `bytesRead` every
 *   tick (any byte proves liveness), a cheap probe on an idle link, TCP keepalive, the socket's
 *   close seen at once (src/pbx/esl-internals.ts taps esl-lite's sockets), and FreeSWITCH's
 *   shutdown notice: the SHUTDOWN event and the `text/disconnect-notice`
 *   (test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt: SHUTDOWN comes first, ~0.7 s after
 *   `fsctl shutdown`; the notice "The system is being shut down." and the close follow).
 * - Every command of ours is an Outgoing (src/pbx/outgoing.ts): written at most once, never
 *   after we gave up on it. A link that is not up takes no new command (`disconnected` at once);
 *   when it goes quiet, closes or announces its shutdown, every command not yet written is
 *   withdrawn (`disconnected`) and will never be written. A command already written whose reply
 *   does not come (the socket closed, or the reply is overdue) is UNCONFIRMED: submit() then
 *   returns it as placed (`unconfirmed`), because it may run, and its job result is reported
 *   lost so that the engine reads the outcome from the channels (or says outcome_unknown).
 * - Background jobs are matched to their BACKGROUND_JOB by our own Job-UUID header (used as-is
 *   by FreeSWITCH, test/fixtures/freeswitch/esl/22-misc-replies.txt); a job accepted on a
 *   socket that closed fails with `disconnected` (its BACKGROUND_JOB went with the socket).
 * - On each new socket, a probe queued behind esl-lite's auth and subscriptions proves the
 *   socket authenticated and subscribed: "up", and onConnected listeners run (resynchronisation).
 * - Events are read by the daemon, not by esl-lite: the tapped socket offers each
 *   `text/event-json` message to the router (src/pbx/event-router.ts) in its place in the
 *   stream (src/pbx/esl-framing.ts says why, and how the order with esl-lite's command replies
 *   is kept); esl-lite only subscribes.
 *
 * Longer than our usual ~400 lines on purpose: these guarantees share one socket generation,
 * one queue of Outgoing commands and one health judgement, and split across files they would
 * have to share that mutable state; the pure parts are apart already (link-health, outgoing,
 * event-filter, esl-internals, esl-framing, box-registrations).
 */
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { FreeSwitchClient, type FreeSwitchEventData } from 'esl-lite'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { PATTERNS } from './commands.js'
import { applyEventFilters, DELIVERED_EVENTS, EXECUTE_NAME, subclassFilter } from './event-filter.js'
import { redactApp, redactCommand } from './redact.js'
import { tapEslLite } from './esl-internals.js'
import { toFsEvent } from './event-json.js'
import { EventRouter } from './event-router.js'
import { DEFAULT_LINK_HEALTH, LinkHealth, type LinkHealthOptions, type LinkState } from './link-health.js'
import { NOOP_COMMAND, Outgoing } from './outgoing.js'
import type { PbxJobSubmitter, SubmitOptions, SubmittedJob } from './submit.js'
import type { EslApp, EslCommand, FsEvent, PbxClient, PbxError } from './types.js'

/**
 * The events the daemon subscribes to (tracker, engine, CTI, IVR). FreeSWITCH then sends only
 * the ones src/pbx/event-filter.ts lets through: CHANNEL_EXECUTE_COMPLETE only for the daemon's
 * own `execute`. Not CHANNEL_HANGUP_COMPLETE: it says nothing the daemon reads that
 * CHANNEL_HANGUP did not (the channel model ends a channel at whichever comes first,
 * src/channels/event-reducer.ts), and it is the largest event of a call (its billing variables).
 */
export const SUBSCRIBED_EVENTS = [...DELIVERED_EVENTS, 'CHANNEL_EXECUTE_COMPLETE'] as const

export interface PbxConnectionOptions {
  readonly host: string
  readonly port: number
  readonly password: string
  readonly logger: Logger
  /** Time allowed for FreeSWITCH to answer one command (command/reply). */
  readonly commandTimeoutMs: number
  /** The link judgement's thresholds (tests shorten them); defaults in src/pbx/link-health.ts. */
  readonly health?: Partial<LinkHealthOptions>
  /** How often the link is judged (default 50 ms). */
  readonly tickMs?: number
  /** TCP keepalive: idle time before the first keepalive probe (default 1000 ms). */
  readonly keepAliveMs?: number
}

export interface PbxConnectionStats {
  /** TCP sockets opened so far (1 after the first connection). */
  readonly connections: number
  readonly connected: boolean
  readonly state: LinkState
  readonly pendingJobs: number
  /** Commands given up before they were written (never reached FreeSWITCH). */
  readonly withdrawn: number
  /** Commands written whose reply never came (they may have run). */
  readonly unconfirmed: number
}

export interface PbxConnection extends PbxClient, PbxJobSubmitter {
  stats(): PbxConnectionStats
  /**
   * Also receive these CUSTOM subclasses (subscribed and let through the filters on this and
   * every later socket). Only a part that needs them asks: a single daemon asks for none and
   * receives no more than DELIVERED_EVENTS (src/pbx/event-filter.ts).
   */
  onCustomEvent(subclasses: readonly string[], listener: (event: FsEvent) => void): void
}

interface PendingJob {
  resolve: (r: Result<string, PbxError>) => void
  /** Socket generation on which FreeSWITCH got the job; undefined until then. */
  acceptedOn: number | undefined
  timer: NodeJS.Timeout | undefined
}

interface PendingExecute {
  resolve: (r: Result<FsEvent, PbxError>) => void
  timer: NodeJS.Timeout
}

const mapError = (e: Error): PbxError => {
  switch (e.name) {
    case 'FreeSwitchTimeoutError':
      return { kind: 'timeout' }
    case 'FreeSwitchFailedCommandError': {
      const reply = (e as Error & { response?: unknown }).response
      return { kind: 'failed', reply: typeof reply === 'string' ? reply.replace(/^-ERR\s*/, '') : e.message }
    }
    default:
      return { kind: 'disconnected' }
  }
}

/** Settles the pending job or execute waiting under `key`, if there is one (ours), with its result. */
function settle<T>(pending: Map<string, { resolve: (r: Result<T, PbxError>) => void; timer: NodeJS.Timeout | undefined }>, key: string, value: T): void {
  const p = pending.get(key)
  if (p === undefined) return
  pending.delete(key)
  clearTimeout(p.timer)
  p.resolve(ok(value))
}

export function connectPbx(opts: PbxConnectionOptions): PbxConnection {
  const log = opts.logger
  const tickMs = opts.tickMs ?? 50
  const keepAliveMs = opts.keepAliveMs ?? 1000
  const health = new LinkHealth({ ...DEFAULT_LINK_HEALTH, ...opts.health })
  const eslLogger = log.child({ module: 'esl-lite' }, { level: log.isLevelEnabled('debug') ? log.level : 'silent' })
  const client = new FreeSwitchClient({ host: opts.host, port: opts.port, password: opts.password, logger: eslLogger })

  /** The filters of the CUSTOM subclasses asked for (onCustomEvent), sent on every socket. */
  const subclassFilters: string[] = []
  const connectedListeners = new Set<() => void>()
  const jobs = new Map<string, PendingJob>()
  /** Our `execute`s waiting for their CHANNEL_EXECUTE_COMPLETE, by the Application-UUID we gave them. */
  const executes = new Map<string, PendingExecute>()
  /** Our commands not yet settled or whose reply is still due on their socket. */
  const outgoing = new Set<Outgoing>()
  let generation = 0
  let announcedGeneration = 0
  let socket: Socket | undefined
  let bytesSeen = 0
  /** When FreeSWITCH last sent a byte (performance.now()), for the logs: wall time vs. responsive time. */
  let lastByteAt = performance.now()
  let closed = false
  let probe: Outgoing | undefined
  let withdrawnCount = 0
  let unconfirmedCount = 0

  const usable = () => !closed && health.usable
  const socketOpen = () => socket !== undefined && !socket.destroyed

  /** Every command not written yet is given up: it will never reach FreeSWITCH. */
  const withdrawQueued = () => {
    for (const o of outgoing) if (o.withdraw('disconnected')) withdrawnCount += 1
  }

  const failJobsOf = (gen: number) => {
    for (const [jobUuid, job] of jobs) {
      if (job.acceptedOn !== undefined && job.acceptedOn <= gen) {
        jobs.delete(jobUuid)
        clearTimeout(job.timer)
        job.resolve(err({ kind: 'disconnected' }))
      }
    }
  }

  const onSocket = (s: Socket) => {
    generation += 1
    const gen = generation
    socket = s
    bytesSeen = s.bytesRead
    health.socketOpened()
    s.setKeepAlive(true, keepAliveMs)
    // 'end' comes first (FreeSWITCH closed); esl-lite removes every listener of the socket soon
    // after, so 'close' may never reach us.
    const gone = () => {
      if (gen !== generation || closed || socket !== s) return
      if (health.state === 'up' || health.state === 'quiet') log.warn({ state: health.state }, 'FreeSWITCH link down: socket closed')
      health.socketClosed()
      socket = undefined
      withdrawQueued()
      for (const o of outgoing) if (o.replyPending || o.isWritten) o.socketGone()
      failJobsOf(gen)
    }
    s.once('end', gone)
    s.once('error', gone)
    s.once('close', gone)
  }

  // Its hooks run only once events arrive, after the rest of this function has run.
  const router = new EventRouter(
    SUBSCRIBED_EVENTS,
    {
      heard: () => health.heard(),
      shutdown: () => shutdownNotice('SHUTDOWN event'),
      jobDone: (jobUuid, body) => settle(jobs, jobUuid, body),
      executeDone: (appUuid, event) => settle(executes, appUuid, event),
    },
    log,
  )
  const internals = tapEslLite(client, onSocket, (body) => router.take(body))

  const shutdownNotice = (what: string) => {
    if (closed || health.state === 'shutting_down') return
    log.warn({ notice: what }, 'FreeSWITCH is shutting down: no more commands until it is back')
    health.shutdownNotice()
    withdrawQueued()
  }

  // esl-lite counts an `auth/request` (a new socket greets us) and a disconnect notice in its
  // stats; we watch those counters through a Proxy.
  client.stats = new Proxy(client.stats, {
    set(target, prop, value: unknown) {
      const done = Reflect.set(target, prop, value)
      if (!closed && prop === 'authRequest') setImmediate(onNewSocket) // after esl-lite queued auth and subscriptions
      if (!closed && prop === 'disconnect') shutdownNotice('text/disconnect-notice')
      return done
    },
  })

  const markUp = () => {
    if (closed) return
    if (health.state === 'connecting') {
      health.authenticated()
      log.info({ connections: generation }, 'FreeSWITCH link up')
    }
    if (announcedGeneration !== generation && health.usable) {
      announcedGeneration = generation
      for (const l of [...connectedListeners]) {
        try {
          l()
        } catch (e) {
          log.error({ err: e }, 'onConnected listener failed')
        }
      }
    }
  }

  /** Queues one of our commands; it settles once answered, withdrawn or unconfirmed. */
  const send = (text: string, canWrite: () => boolean): Outgoing => {
    const o = new Outgoing(text, () => generation, canWrite)
    outgoing.add(o)
    void o.outcome.then((r) => {
      if (r.kind === 'unconfirmed') unconfirmedCount += 1
    })
    internals.enqueue(o)
    return o
  }

  /** Gives up on a command unanswered after `ms`: withdrawn if not written yet, else unconfirmed. Cleared once it settles. */
  const giveUpAfter = (out: Outgoing, ms: number): NodeJS.Timeout =>
    setTimeout(() => {
      if (out.withdraw('timeout')) withdrawnCount += 1
      else out.lose()
    }, ms)

  /** The event filters (src/pbx/event-filter.ts), then the probe that marks the link up. */
  function onNewSocket() {
    if (closed || !socketOpen()) return
    const gen = generation
    void applyEventFilters(async (text) => {
      if (gen !== generation || !socketOpen()) return undefined
      const r = await send(text, () => gen === generation && socketOpen()).outcome
      return r.kind === 'answered' ? r.replyText : undefined
    }, subclassFilters).then((outcome) => {
      if (outcome.kind === 'unfiltered' && gen === generation && !closed)
        log.warn({ command: outcome.refused, reply: outcome.reply }, 'FreeSWITCH refused an event filter: it sends every subscribed event (more bytes, nothing lost)')
    })
    sendProbe()
  }

  function sendProbe() {
    if (closed || probe !== undefined || !socketOpen()) return
    const p = send(NOOP_COMMAND, socketOpen)
    probe = p
    void p.outcome.then((r) => {
      if (probe === p) probe = undefined
      if (r.kind === 'answered' && r.replyText.startsWith('+') && p.socketGeneration === generation) markUp()
    })
  }

  // esl-lite's own logs are silenced (it logs every refused attempt): say it here, every 30 s.
  let lastDownLog = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    if (socket !== undefined && socket.bytesRead !== bytesSeen) {
      bytesSeen = socket.bytesRead
      lastByteAt = now
      health.heard()
    }
    for (const o of outgoing) if (!o.isQueued && !o.isWritten && !o.replyPending) outgoing.delete(o)
    const awaiting = probe !== undefined || [...outgoing].some((o) => o.replyPending)
    const advice = health.tick(now, awaiting)
    if (advice.becameQuiet) {
      // silenceMs counts the daemon's responsive time only; sinceLastByteMs is wall time (the difference: the daemon was blocked).
      log.warn(
        { silenceMs: Math.round(health.silence), sinceLastByteMs: Math.round(now - lastByteAt) },
        'FreeSWITCH link quiet: no byte while a reply is awaited; no more commands until it answers',
      )
      withdrawQueued()
    }
    if (advice.probe) sendProbe()
    if (!health.usable && Date.now() - lastDownLog > 30_000) {
      if (lastDownLog !== 0 || generation === 0) log.warn({ host: opts.host, port: opts.port, state: health.state }, 'FreeSWITCH not connected')
      lastDownLog = Date.now()
    }
  }, tickMs)

  // esl-lite subscribes to the events that have listeners (`event json ...`, again on every new
  // socket); the events themselves reach the router from the tapped socket, and would through these
  // listeners too should one ever get past the tap.
  const fromEslLite = (ev: FreeSwitchEventData) => router.route(toFsEvent(ev.body.data))
  for (const name of SUBSCRIBED_EVENTS) client.on(name, fromEslLite)
  client.on('SHUTDOWN', fromEslLite)

  const submit = async (command: EslCommand, o: SubmitOptions): Promise<Result<SubmittedJob, PbxError>> => {
    if (!usable()) return err({ kind: 'disconnected' })
    const jobUuid = randomUUID()
    let resolve!: (r: Result<string, PbxError>) => void
    const result = new Promise<Result<string, PbxError>>((r) => (resolve = r))
    const job: PendingJob = { resolve, acceptedOn: undefined, timer: undefined }
    jobs.set(jobUuid, job)
    if (log.isLevelEnabled('debug')) log.debug({ jobUuid, command: redactCommand(command) }, 'esl bgapi')
    const out = send(`bgapi ${command}\nJob-UUID: ${jobUuid}`, () => usable() && socketOpen())
    const acceptTimer = giveUpAfter(out, o.acceptTimeoutMs ?? opts.commandTimeoutMs)
    const sent = await out.outcome
    clearTimeout(acceptTimer)
    if (sent.kind === 'withdrawn' || (sent.kind === 'answered' && !sent.replyText.startsWith('+'))) {
      jobs.delete(jobUuid)
      if (sent.kind === 'withdrawn') return err({ kind: sent.why })
      return err({ kind: 'failed', reply: sent.replyText.replace(/^-ERR\s*/, '') })
    }
    if (sent.kind === 'unconfirmed') log.warn({ jobUuid, command: command.split(' ')[0] }, 'command written but not confirmed: it may run; its result is read from the channels')
    job.acceptedOn = out.socketGeneration
    if (!jobs.has(jobUuid)) return ok({ jobUuid, result, ...(sent.kind === 'unconfirmed' ? { unconfirmed: true as const } : {}) })
    // Its socket is gone already: the BACKGROUND_JOB went with it.
    if (out.socketGeneration !== generation || !socketOpen()) failJobsOf(out.socketGeneration)
    else {
      job.timer = setTimeout(() => {
        if (jobs.delete(jobUuid)) resolve(err({ kind: 'timeout' }))
      }, o.resultTimeoutMs)
    }
    return ok({ jobUuid, result, ...(sent.kind === 'unconfirmed' ? { unconfirmed: true as const } : {}) })
  }

  return {
    isConnected: usable,
    submit,
    async bgapi(command, timeoutMs) {
      const t = timeoutMs ?? opts.commandTimeoutMs
      const s = await submit(command, { acceptTimeoutMs: Math.min(t, opts.commandTimeoutMs), resultTimeoutMs: t })
      if (!s.ok) return s
      return s.value.result
    },
    async api(command, timeoutMs) {
      if (!usable()) return err({ kind: 'disconnected' })
      if (log.isLevelEnabled('debug')) log.debug({ command: redactCommand(command) }, 'esl api')
      // Its reply is its output: esl-framing.ts hands esl-lite the api/response as a command/reply.
      const out = send(`api ${command}`, () => usable() && socketOpen())
      const timer = giveUpAfter(out, timeoutMs ?? opts.commandTimeoutMs)
      const r = await out.outcome
      clearTimeout(timer)
      if (r.kind === 'answered') return ok(r.body.toString('utf8'))
      // Unconfirmed: written, its output lost; an instant command's caller only needs to know it has none.
      return err({ kind: r.kind === 'withdrawn' ? r.why : 'timeout' })
    },
    async execute(uuid: string, app: EslApp, timeoutMs?: number): Promise<Result<FsEvent, PbxError>> {
      if (!PATTERNS.uuid.test(uuid)) return err({ kind: 'failed', reply: 'invalid uuid' })
      if (!usable()) return err({ kind: 'disconnected' })
      if (log.isLevelEnabled('debug')) log.debug({ uuid, ...redactApp(app) }, 'esl execute')
      // Named so that its completion passes the event filter (src/pbx/event-filter.ts).
      const appUuid = randomUUID()
      const t = timeoutMs ?? opts.commandTimeoutMs
      const completed = new Promise<Result<FsEvent, PbxError>>((resolve) => {
        const timer = setTimeout(() => {
          if (executes.delete(appUuid)) resolve(err({ kind: 'timeout' }))
        }, t)
        executes.set(appUuid, { resolve, timer })
      })
      const r = await client.execute_uuid(uuid, app.app, app.arg, { 'event-uuid': appUuid, 'event-uuid-name': EXECUTE_NAME }, t)
      if (r instanceof Error) {
        const pending = executes.get(appUuid)
        if (pending !== undefined) {
          executes.delete(appUuid)
          clearTimeout(pending.timer)
        }
        return err(mapError(r))
      }
      return completed
    },
    onCustomEvent(subclasses, listener) {
      for (const subclass of subclasses) {
        const filter = subclassFilter(subclass)
        if (subclassFilters.includes(filter)) continue
        subclassFilters.push(filter)
        // On the socket already filtered; later sockets get it with the others (onNewSocket).
        if (socketOpen()) void send(filter, socketOpen).outcome
      }
      for (const subclass of subclasses) {
        // esl-lite subscribes (`event json CUSTOM <subclass>`) now and on every new socket.
        if (router.onCustom(subclass, listener)) client.custom.on(subclass, fromEslLite)
      }
    },
    onEvent: (listener) => router.onEvent(listener),
    onConnected(listener) {
      connectedListeners.add(listener)
      return () => connectedListeners.delete(listener)
    },
    stats: () => ({
      connections: generation,
      connected: usable(),
      state: health.state,
      pendingJobs: jobs.size,
      withdrawn: withdrawnCount,
      unconfirmed: unconfirmedCount,
    }),
    async close() {
      if (closed) return
      closed = true
      clearInterval(ticker)
      withdrawQueued()
      for (const [, job] of jobs) {
        clearTimeout(job.timer)
        job.resolve(err({ kind: 'disconnected' }))
      }
      jobs.clear()
      for (const [, e] of executes) {
        clearTimeout(e.timer)
        e.resolve(err({ kind: 'disconnected' }))
      }
      executes.clear()
      client.end()
      // Let esl-lite's loop see the end of its socket.
      await new Promise((r) => setImmediate(r))
    },
  }
}
