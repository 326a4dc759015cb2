/**
 * The inbound Event Socket connection to FreeSWITCH: what the daemon has pending on it, and
 * whether it is usable. The wire itself (socket, reconnection, the one reader, authentication,
 * one command at a time) is src/pbx/esl-session.ts's; this class owns the rest, in one place:
 *
 * - Health (src/pbx/link-health.ts judges; this class feeds it): the socket's `bytesRead` every
 *   tick (any byte proves liveness), a cheap probe on an idle link, TCP keepalive, the socket's
 *   close seen at once, and FreeSWITCH's shutdown notice: the SHUTDOWN event and the
 *   `text/disconnect-notice` (test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt: SHUTDOWN comes
 *   first, ~0.7 s after `fsctl shutdown`; the notice "The system is being shut down." and the
 *   close follow).
 * - Every command of ours is an Outgoing (src/pbx/outgoing.ts): written at most once, never
 *   after we gave up on it. A link that is not up takes no new command (`disconnected` at once);
 *   when it goes quiet, closes or announces its shutdown, every command not yet written is
 *   withdrawn (`disconnected`) and will never be written. A command already written whose reply
 *   does not come (the socket closed, or the reply is overdue) is UNCONFIRMED: submit() then
 *   returns it as placed (`unconfirmed`), because it may run, and its job result is reported
 *   lost so that the engine reads the outcome from the channels (or says outcome_unknown).
 * - Background jobs are matched to their BACKGROUND_JOB by our own Job-UUID header (used as-is
 *   by FreeSWITCH, test/fixtures/freeswitch/esl/22-misc-replies.txt), executes to their
 *   CHANNEL_EXECUTE_COMPLETE by the Application-UUID we gave them; a job accepted on a socket
 *   that closed fails with `disconnected` (its BACKGROUND_JOB went with the socket).
 * - On each authenticated socket: the subscriptions, the event filters
 *   (src/pbx/event-filter.ts), and behind them a probe whose reply proves the socket subscribed:
 *   "up", and onConnected listeners run (resynchronisation).
 * - Events: the session's reader hands each `text/event-json` body to the router
 *   (src/pbx/event-router.ts) in its place in the stream, from the socket's callback: the one
 *   path every event takes.
 *
 * Longer than our usual ~400 lines on purpose: these guarantees share one socket generation,
 * one set of pending jobs and executes and one health judgement; the parts that need none of
 * that state are apart already (esl-session, esl-reader, esl-framing, outgoing, link-health,
 * event-filter, event-router, box-registrations).
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { PATTERNS } from './commands.js'
import { applyEventFilters, DELIVERED_EVENTS, EXECUTE_NAME, subclassFilter } from './event-filter.js'
import { EslSession } from './esl-session.js'
import { EventRouter, type EventListener } from './event-router.js'
import { DEFAULT_LINK_HEALTH, LinkHealth, type LinkHealthOptions, type LinkState } from './link-health.js'
import { Outgoing } from './outgoing.js'
import { redactApp, redactCommand } from './redact.js'
import type { PbxJobSubmitter, SubmitOptions, SubmittedJob } from './submit.js'
import type { EslApp, EslCommand, FsEvent, InstantCommand, PbxClient, PbxError } from './types.js'

/**
 * The events the daemon subscribes to (tracker, engine, CTI, IVR). FreeSWITCH then sends only
 * the ones src/pbx/event-filter.ts lets through: CHANNEL_EXECUTE_COMPLETE only for the daemon's
 * own `execute`. Not CHANNEL_HANGUP_COMPLETE: it says nothing the daemon reads that
 * CHANNEL_HANGUP did not (the channel model ends a channel at whichever comes first,
 * src/channels/event-reducer.ts), and it is the largest event of a call (its billing variables).
 * @internal Exported for tests: test/pbx and bench/ subscribe the same list.
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
  readonly resolve: (r: Result<string, PbxError>) => void
  /** Socket generation on which FreeSWITCH got the job; undefined until then. */
  acceptedOn: number | undefined
  timer: NodeJS.Timeout | undefined
}

interface PendingExecute {
  readonly resolve: (r: Result<FsEvent, PbxError>) => void
  readonly timer: NodeJS.Timeout
}

/**
 * What the probe writes: a subscription the connection has anyway. FreeSWITCH answers it at
 * once on the listener's own thread with `+OK event listener enabled json`
 * (test/fixtures/freeswitch/esl/01-session-basics.txt) and nothing else changes.
 */
const PROBE_COMMAND = 'event json BACKGROUND_JOB'

/**
 * The `event json` subscriptions of every socket, one command per name, in the order esl-lite
 * sent them when it subscribed for the daemon (its own three first, then the daemon's).
 */
const SUBSCRIPTIONS = [...new Set(['CUSTOM', 'CHANNEL_EXECUTE_COMPLETE', 'BACKGROUND_JOB', ...SUBSCRIBED_EVENTS, 'SHUTDOWN'])].map((name) => `event json ${name}`)
const customSubscription = (subclass: string) => `event json CUSTOM ${subclass}`

/** Settles the pending job or execute waiting under `key`, if there is one (ours), with its result. */
function settle<T>(pending: Map<string, { resolve: (r: Result<T, PbxError>) => void; timer: NodeJS.Timeout | undefined }>, key: string, value: T): void {
  const p = pending.get(key)
  if (p === undefined) return
  pending.delete(key)
  clearTimeout(p.timer)
  p.resolve(ok(value))
}

export function connectPbx(opts: PbxConnectionOptions): PbxConnection {
  return new FreeSwitchLink(opts)
}

/** The connection's state, all of it: one instance per link to FreeSWITCH (connectPbx). */
class FreeSwitchLink implements PbxConnection {
  private readonly log: Logger
  private readonly health: LinkHealth
  private readonly session: EslSession
  private readonly router: EventRouter
  private readonly ticker: NodeJS.Timeout
  /** The CUSTOM subclasses asked for (onCustomEvent): subscribed and let through on every socket. */
  private readonly customSubclasses: string[] = []
  private readonly connectedListeners = new Set<() => void>()
  private readonly jobs = new Map<string, PendingJob>()
  /** Our `execute`s waiting for their CHANNEL_EXECUTE_COMPLETE, by the Application-UUID we gave them. */
  private readonly executes = new Map<string, PendingExecute>()
  /** The socket generation whose "up" the onConnected listeners heard of. */
  private announcedGeneration = 0
  private bytesSeen = 0
  /** When FreeSWITCH last sent a byte (performance.now()), for the logs: wall time vs. responsive time. */
  private lastByteAt = performance.now()
  /** When the link was last said to be down (Date.now()): said every 30 s, not at every attempt. */
  private lastDownLog = 0
  private closed = false
  private probe: Outgoing | undefined
  private withdrawnCount = 0
  private unconfirmedCount = 0

  constructor(private readonly opts: PbxConnectionOptions) {
    this.log = opts.logger
    this.health = new LinkHealth({ ...DEFAULT_LINK_HEALTH, ...opts.health })
    this.router = new EventRouter(
      SUBSCRIBED_EVENTS,
      {
        heard: () => this.health.heard(),
        shutdown: () => this.shutdownNotice('SHUTDOWN event'),
        jobDone: (jobUuid, body) => settle(this.jobs, jobUuid, body),
        executeDone: (appUuid, event) => settle(this.executes, appUuid, event),
      },
      this.log,
    )
    this.session = new EslSession(
      { host: opts.host, port: opts.port, password: opts.password, keepAliveMs: opts.keepAliveMs ?? 1000, logger: this.log },
      {
        opened: () => this.socketOpened(),
        authenticated: (gen) => this.authenticated(gen),
        closed: (gen) => this.socketClosed(gen),
        event: (body) => this.router.take(body),
        disconnectNotice: () => this.shutdownNotice('text/disconnect-notice'),
      },
    )
    this.ticker = setInterval(() => this.tick(), opts.tickMs ?? 50)
  }

  isConnected(): boolean {
    return this.usable()
  }

  async submit(command: EslCommand, o: SubmitOptions): Promise<Result<SubmittedJob, PbxError>> {
    if (!this.usable()) return err({ kind: 'disconnected' })
    const jobUuid = randomUUID()
    let resolve!: (r: Result<string, PbxError>) => void
    const result = new Promise<Result<string, PbxError>>((r) => (resolve = r))
    const job: PendingJob = { resolve, acceptedOn: undefined, timer: undefined }
    this.jobs.set(jobUuid, job)
    if (this.log.isLevelEnabled('debug')) this.log.debug({ jobUuid, command: redactCommand(command) }, 'esl bgapi')
    const out = this.send(`bgapi ${command}\nJob-UUID: ${jobUuid}`, this.writable)
    const acceptTimer = this.giveUpAfter(out, o.acceptTimeoutMs ?? this.opts.commandTimeoutMs)
    const sent = await out.outcome
    clearTimeout(acceptTimer)
    if (sent.kind === 'withdrawn' || (sent.kind === 'answered' && !sent.replyText.startsWith('+'))) {
      this.jobs.delete(jobUuid)
      if (sent.kind === 'withdrawn') return err({ kind: sent.why })
      return err({ kind: 'failed', reply: sent.replyText.replace(/^-ERR\s*/, '') })
    }
    if (sent.kind === 'unconfirmed') this.log.warn({ jobUuid, command: command.split(' ')[0] }, 'command written but not confirmed: it may run; its result is read from the channels')
    const submitted = { jobUuid, result, ...(sent.kind === 'unconfirmed' ? { unconfirmed: true as const } : {}) }
    job.acceptedOn = out.socketGeneration
    // Settled already (its BACKGROUND_JOB came, or the link closed).
    if (!this.jobs.has(jobUuid)) return ok(submitted)
    // Its socket is gone already: the BACKGROUND_JOB went with it.
    if (out.socketGeneration !== this.session.generation || !this.session.socketOpen) this.failJobsOf(out.socketGeneration)
    else {
      job.timer = setTimeout(() => {
        if (this.jobs.delete(jobUuid)) resolve(err({ kind: 'timeout' }))
      }, o.resultTimeoutMs)
    }
    return ok(submitted)
  }

  async bgapi(command: EslCommand, timeoutMs?: number): Promise<Result<string, PbxError>> {
    const t = timeoutMs ?? this.opts.commandTimeoutMs
    const s = await this.submit(command, { acceptTimeoutMs: Math.min(t, this.opts.commandTimeoutMs), resultTimeoutMs: t })
    if (!s.ok) return s
    return s.value.result
  }

  async api(command: InstantCommand, timeoutMs?: number): Promise<Result<string, PbxError>> {
    if (!this.usable()) return err({ kind: 'disconnected' })
    if (this.log.isLevelEnabled('debug')) this.log.debug({ command: redactCommand(command) }, 'esl api')
    // Its reply is its output (the api/response's body).
    const out = this.send(`api ${command}`, this.writable)
    const timer = this.giveUpAfter(out, timeoutMs ?? this.opts.commandTimeoutMs)
    const r = await out.outcome
    clearTimeout(timer)
    if (r.kind === 'answered') return ok(r.body.toString('utf8'))
    // Unconfirmed: written, its output lost; an instant command's caller only needs to know it has none.
    return err({ kind: r.kind === 'withdrawn' ? r.why : 'timeout' })
  }

  async execute(uuid: string, app: EslApp, timeoutMs?: number): Promise<Result<FsEvent, PbxError>> {
    if (!PATTERNS.uuid.test(uuid)) return err({ kind: 'failed', reply: 'invalid uuid' })
    if (!this.usable()) return err({ kind: 'disconnected' })
    if (this.log.isLevelEnabled('debug')) this.log.debug({ uuid, ...redactApp(app) }, 'esl execute')
    // Named so that its completion passes the event filter (src/pbx/event-filter.ts).
    const appUuid = randomUUID()
    const t = timeoutMs ?? this.opts.commandTimeoutMs
    const completed = new Promise<Result<FsEvent, PbxError>>((resolve) => {
      const timer = setTimeout(() => {
        if (this.executes.delete(appUuid)) resolve(err({ kind: 'timeout' }))
      }, t)
      this.executes.set(appUuid, { resolve, timer })
    })
    // The headers in the order esl-lite's execute_uuid wrote them; the argument as a text/plain body.
    const text = `sendmsg ${uuid}\nevent-uuid: ${appUuid}\nevent-uuid-name: ${EXECUTE_NAME}\nexecute-app-name: ${app.app}\ncall-command: execute`
    const out = this.send(text, this.writable, app.arg.length === 0 ? undefined : Buffer.from(app.arg))
    const timer = this.giveUpAfter(out, t)
    const r = await out.outcome
    clearTimeout(timer)
    if (r.kind === 'answered' && r.replyText.startsWith('+')) return completed
    const pending = this.executes.get(appUuid)
    if (pending !== undefined) {
      this.executes.delete(appUuid)
      clearTimeout(pending.timer)
    }
    if (r.kind === 'withdrawn') return err({ kind: r.why })
    if (r.kind === 'unconfirmed') return err({ kind: 'timeout' })
    if (r.replyText.startsWith('-')) return err({ kind: 'failed', reply: r.replyText.replace(/^-ERR\s*/, '') })
    // No Reply-Text: not a reply to a command.
    return err({ kind: 'disconnected' })
  }

  onCustomEvent(subclasses: readonly string[], listener: (event: FsEvent) => void): void {
    for (const subclass of subclasses) {
      if (this.router.onCustom(subclass, listener) && !this.customSubclasses.includes(subclass)) {
        this.customSubclasses.push(subclass)
        // On the socket subscribed already; later sockets get it with the others (authenticated()).
        if (this.session.authenticated) {
          const gen = this.session.generation
          void this.send(customSubscription(subclass), () => this.session.generation === gen).outcome
          void this.send(subclassFilter(subclass), () => this.session.generation === gen).outcome
        }
      }
    }
  }

  onEvent(listener: EventListener): () => void {
    return this.router.onEvent(listener)
  }

  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener)
    return () => this.connectedListeners.delete(listener)
  }

  stats(): PbxConnectionStats {
    return {
      connections: this.session.generation,
      connected: this.usable(),
      state: this.health.state,
      pendingJobs: this.jobs.size,
      withdrawn: this.withdrawnCount,
      unconfirmed: this.unconfirmedCount,
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.ticker)
    this.withdrawnCount += this.session.withdrawQueued('disconnected')
    for (const [, job] of this.jobs) {
      clearTimeout(job.timer)
      job.resolve(err({ kind: 'disconnected' }))
    }
    this.jobs.clear()
    for (const [, e] of this.executes) {
      clearTimeout(e.timer)
      e.resolve(err({ kind: 'disconnected' }))
    }
    this.executes.clear()
    this.session.end()
    // Let the socket's close run.
    await new Promise((r) => setImmediate(r))
  }

  private usable(): boolean {
    return !this.closed && this.health.usable
  }

  /** Whether a command may still be written when its turn comes. */
  private readonly writable = (): boolean => this.usable() && this.session.socketOpen

  /** Queues one of our commands; it settles once answered, withdrawn or unconfirmed. */
  private send(text: string, canWrite: () => boolean, body?: Buffer): Outgoing {
    const o = new Outgoing(text, canWrite, body)
    void o.outcome.then((r) => {
      if (r.kind === 'unconfirmed') this.unconfirmedCount += 1
    })
    this.session.send(o)
    return o
  }

  /** Gives up on a command unanswered after `ms`: withdrawn if not written yet, else unconfirmed. Cleared once it settles. */
  private giveUpAfter(out: Outgoing, ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      if (out.withdraw('timeout')) this.withdrawnCount += 1
      else out.lose()
    }, ms)
  }

  /** Every command not written yet is given up: it will never reach FreeSWITCH. */
  private withdrawQueued(): void {
    this.withdrawnCount += this.session.withdrawQueued('disconnected')
  }

  private failJobsOf(gen: number): void {
    for (const [jobUuid, job] of this.jobs) {
      if (job.acceptedOn !== undefined && job.acceptedOn <= gen) {
        this.jobs.delete(jobUuid)
        clearTimeout(job.timer)
        job.resolve(err({ kind: 'disconnected' }))
      }
    }
  }

  private socketOpened(): void {
    if (this.closed) return
    this.bytesSeen = this.session.bytesRead ?? 0
    this.health.socketOpened()
  }

  private socketClosed(gen: number): void {
    if (this.closed) return
    if (this.health.state === 'up' || this.health.state === 'quiet') this.log.warn({ state: this.health.state }, 'FreeSWITCH link down: socket closed')
    this.health.socketClosed()
    this.withdrawQueued()
    this.failJobsOf(gen)
  }

  private shutdownNotice(what: string): void {
    if (this.closed || this.health.state === 'shutting_down') return
    this.log.warn({ notice: what }, 'FreeSWITCH is shutting down: no more commands until it is back')
    this.health.shutdownNotice()
    this.withdrawQueued()
  }

  /** A socket authenticated: its subscriptions, the event filters, then the probe that marks the link up. */
  private authenticated(gen: number): void {
    if (this.closed) return
    const onThisSocket = () => gen === this.session.generation && this.session.socketOpen
    for (const command of [...SUBSCRIPTIONS, ...this.customSubclasses.map(customSubscription)]) void this.send(command, onThisSocket).outcome
    const filters = this.customSubclasses.map(subclassFilter)
    void applyEventFilters(async (text) => {
      if (!onThisSocket()) return undefined
      const r = await this.send(text, onThisSocket).outcome
      return r.kind === 'answered' ? r.replyText : undefined
    }, filters).then((outcome) => {
      if (outcome.kind === 'unfiltered' && onThisSocket() && !this.closed)
        this.log.warn({ command: outcome.refused, reply: outcome.reply }, 'FreeSWITCH refused an event filter: it sends every subscribed event (more bytes, nothing lost)')
    })
    this.sendProbe()
  }

  private sendProbe(): void {
    if (this.closed || this.probe !== undefined || !this.session.authenticated) return
    const p = this.send(PROBE_COMMAND, () => this.session.socketOpen)
    this.probe = p
    void p.outcome.then((r) => {
      if (this.probe === p) this.probe = undefined
      if (r.kind === 'answered' && r.replyText.startsWith('+') && p.socketGeneration === this.session.generation) this.markUp()
    })
  }

  private markUp(): void {
    if (this.closed) return
    if (this.health.state === 'connecting') {
      this.health.authenticated()
      this.log.info({ connections: this.session.generation }, 'FreeSWITCH link up')
    }
    if (this.announcedGeneration !== this.session.generation && this.health.usable) {
      this.announcedGeneration = this.session.generation
      for (const l of [...this.connectedListeners]) {
        try {
          l()
        } catch (e) {
          this.log.error({ err: e }, 'onConnected listener failed')
        }
      }
    }
  }

  private tick(): void {
    const now = performance.now()
    const bytesRead = this.session.bytesRead
    if (bytesRead !== undefined && bytesRead !== this.bytesSeen) {
      this.bytesSeen = bytesRead
      this.lastByteAt = now
      this.health.heard()
    }
    const advice = this.health.tick(now, this.probe !== undefined || this.session.awaitingReply)
    if (advice.becameQuiet) {
      // silenceMs counts the daemon's responsive time only; sinceLastByteMs is wall time (the difference: the daemon was blocked).
      this.log.warn(
        { silenceMs: Math.round(this.health.silence), sinceLastByteMs: Math.round(now - this.lastByteAt) },
        'FreeSWITCH link quiet: no byte while a reply is awaited; no more commands until it answers',
      )
      this.withdrawQueued()
    }
    if (advice.probe) this.sendProbe()
    if (!this.health.usable && Date.now() - this.lastDownLog > 30_000) {
      if (this.lastDownLog !== 0 || this.session.generation === 0) this.log.warn({ host: this.opts.host, port: this.opts.port, state: this.health.state }, 'FreeSWITCH not connected')
      this.lastDownLog = Date.now()
    }
  }
}
