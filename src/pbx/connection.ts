/**
 * The inbound Event Socket connection to FreeSWITCH, over esl-lite's FreeSwitchClient.
 *
 * What esl-lite does by itself (node_modules/esl-lite/esl-lite.mjs): connects, reconnects after
 * a drop (at once after a close, with a growing pause up to 1 s after a refused connection),
 * authenticates on every `auth/request`, re-sends its `event json` subscriptions, and re-queues
 * the commands that had no reply yet. What it does not do is say whether it is connected, so
 * health is built here:
 *
 * - a new socket is seen the moment esl-lite counts an `auth/request` (stats.authRequest; we
 *   watch the counter through a Proxy): the connection becomes "down" and every job accepted on
 *   the previous socket is failed with `disconnected` (its BACKGROUND_JOB went with the socket);
 * - a probe (`bgapi status`) is queued behind esl-lite's auth and subscriptions: its
 *   command/reply proves the socket is authenticated and subscribed: "up", and onConnected
 *   listeners run (resynchronisation) once per socket;
 * - a probe goes out every probeIntervalMs; an unanswered probe older than probeTimeoutMs marks
 *   the connection down. Only one probe is ever outstanding, so none pile up while FreeSWITCH
 *   is away (esl-lite would send them all on reconnect).
 *
 * esl-lite re-sends a command whose reply was lost in a drop. For an originate that means a
 * second originate with the same origination_uuid: FreeSWITCH refuses it with
 * `-ERR DESTINATION_OUT_OF_ORDER` while the first call lives
 * (test/fixtures/freeswitch/esl/23-duplicate-origination-uuid.txt); the engine treats that reply as
 * "job lost" and reads the outcome from channel events.
 *
 * Commands must not be queued while the link is down (they could run much later): bgapi and
 * submit answer `disconnected` at once.
 */
import { randomUUID } from 'node:crypto'
import { FreeSwitchClient, type FreeSwitchEventData } from 'esl-lite'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import type { EslApp, EslCommand, FsEvent, PbxClient, PbxError } from './types.js'
import type { PbxJobSubmitter, SubmitOptions, SubmittedJob } from './submit.js'
import { PATTERNS } from './commands.js'

/** The events the daemon follows (tracker, engine, CTI, IVR). */
export const SUBSCRIBED_EVENTS = [
  'CHANNEL_CREATE',
  'CHANNEL_PROGRESS',
  'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_ANSWER',
  'CHANNEL_BRIDGE',
  'CHANNEL_UNBRIDGE',
  'CHANNEL_PARK',
  'CHANNEL_HANGUP',
  'CHANNEL_HANGUP_COMPLETE',
  'CHANNEL_DESTROY',
  'CHANNEL_EXECUTE_COMPLETE',
  'BACKGROUND_JOB',
  'DTMF',
] as const

export interface PbxConnectionOptions {
  readonly host: string
  readonly port: number
  readonly password: string
  readonly logger: Logger
  /** Time allowed for FreeSWITCH to answer one command (command/reply). */
  readonly commandTimeoutMs: number
  /** Liveness probe period (default 1000 ms). */
  readonly probeIntervalMs?: number
  /** An unanswered probe older than this marks the link down (default 1500 ms). */
  readonly probeTimeoutMs?: number
}

export interface PbxConnectionStats {
  /** Sockets authenticated so far (1 after the first connection). */
  readonly connections: number
  readonly connected: boolean
  readonly pendingJobs: number
}

export interface PbxConnection extends PbxClient, PbxJobSubmitter {
  stats(): PbxConnectionStats
}

/** esl-lite's client with access to its protected send(): bgapi with our own Job-UUID. */
class EslClient extends FreeSwitchClient {
  sendBgapi(command: string, jobUuid: string, timeoutMs: number) {
    // A custom Job-UUID header is used as-is by FreeSWITCH
    // (test/fixtures/freeswitch/esl/22-misc-replies.txt).
    return this.send(`bgapi ${command}`, { 'job-uuid': jobUuid }, undefined, timeoutMs)
  }
}

interface PendingJob {
  resolve: (r: Result<string, PbxError>) => void
  /** Socket generation on which FreeSWITCH accepted the job; undefined until accepted. */
  acceptedOn: number | undefined
  timer: NodeJS.Timeout | undefined
}

/** esl-lite's parsed event as a header map of strings (event-json values are strings). */
const toFsEvent = (data: Record<string, unknown>): FsEvent => {
  const out: Record<string, string> = {}
  for (const k in data) {
    const v = data[k]
    if (typeof v === 'string') out[k] = v
  }
  return out
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

/**
 * Probes wait (long) for their real reply, so that no second probe joins esl-lite's queue while
 * one is outstanding; our own probeTimeoutMs judges the link. After this, a stalled probe is
 * given up and another may be queued (at most two a minute pile up while FreeSWITCH is stalled).
 */
const PROBE_SEND_TIMEOUT_MS = 30_000

export function connectPbx(opts: PbxConnectionOptions): PbxConnection {
  const log = opts.logger
  const probeIntervalMs = opts.probeIntervalMs ?? 1000
  const probeTimeoutMs = opts.probeTimeoutMs ?? 1500
  const eslLogger = log.child({ module: 'esl-lite' }, { level: log.isLevelEnabled('debug') ? log.level : 'silent' })
  const client = new EslClient({ host: opts.host, port: opts.port, password: opts.password, logger: eslLogger })

  const eventListeners = new Set<(e: FsEvent) => void>()
  const connectedListeners = new Set<() => void>()
  const jobs = new Map<string, PendingJob>()
  const probeJobs = new Set<string>()
  let generation = 0
  let announcedGeneration = 0
  let connected = false
  let closed = false
  let probe: { sentAt: number } | undefined
  /**
   * When FreeSWITCH last sent us anything on this socket. esl-lite sends commands one at a time,
   * so under load the probe waits its turn behind originates: a link that keeps delivering
   * events is alive even if the probe's reply is late (the API benchmark saw 503s otherwise).
   */
  let lastHeardAt = 0

  const setDown = (why: string) => {
    if (connected) log.warn({ why }, 'FreeSWITCH link down')
    connected = false
  }

  const onNewSocket = () => {
    generation += 1
    lastHeardAt = 0
    setDown(generation === 1 ? 'connecting' : 'new socket (reconnection)')
    for (const [jobUuid, job] of jobs) {
      if (job.acceptedOn !== undefined && job.acceptedOn < generation) {
        jobs.delete(jobUuid)
        clearTimeout(job.timer)
        job.resolve(err({ kind: 'disconnected' }))
      }
    }
    // After esl-lite queued auth and the subscriptions for this socket.
    setImmediate(sendProbe)
  }

  // esl-lite increments stats.authRequest when a socket greets us with auth/request.
  client.stats = new Proxy(client.stats, {
    set(target, prop, value: unknown) {
      const done = Reflect.set(target, prop, value)
      if (prop === 'authRequest' && !closed) onNewSocket()
      return done
    },
  })

  const markUp = () => {
    if (closed) return
    if (!connected) log.info({ connections: generation }, 'FreeSWITCH link up')
    connected = true
    if (announcedGeneration !== generation) {
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

  function sendProbe() {
    if (closed || probe !== undefined || generation === 0) return
    probe = { sentAt: Date.now() }
    const jobUuid = randomUUID()
    probeJobs.add(jobUuid)
    client.sendBgapi('status', jobUuid, PROBE_SEND_TIMEOUT_MS).then(
      (r) => {
        probe = undefined
        if (r instanceof Error) {
          probeJobs.delete(jobUuid)
          if (r.name !== 'FreeSwitchApplicationEndedError') setDown(`probe refused: ${r.message}`)
          return
        }
        markUp()
      },
      () => {
        probe = undefined
      },
    )
  }

  // esl-lite's own logs are silenced (it logs every refused attempt): say it here, every 30 s.
  let lastDownLog = 0
  const ticker = setInterval(() => {
    if (!connected && Date.now() - lastDownLog > 30_000) {
      if (lastDownLog !== 0 || generation === 0) log.warn({ host: opts.host, port: opts.port }, 'FreeSWITCH not connected')
      lastDownLog = Date.now()
    }
    if (probe !== undefined) {
      const now = Date.now()
      if (now - probe.sentAt > probeTimeoutMs && now - lastHeardAt > probeTimeoutMs) setDown('liveness probe unanswered')
      return
    }
    sendProbe()
  }, probeIntervalMs)

  const deliver = (ev: FreeSwitchEventData) => {
    lastHeardAt = Date.now()
    const event = toFsEvent(ev.body.data)
    if (event['Event-Name'] === 'BACKGROUND_JOB') {
      const jobUuid = event['Job-UUID'] ?? ''
      if (probeJobs.delete(jobUuid)) return
      const job = jobs.get(jobUuid)
      if (job !== undefined) {
        jobs.delete(jobUuid)
        clearTimeout(job.timer)
        job.resolve(ok(event._body ?? ''))
      }
    }
    for (const l of [...eventListeners]) {
      try {
        l(event)
      } catch (e) {
        log.error({ err: e, event: event['Event-Name'] }, 'event listener failed')
      }
    }
  }
  for (const name of SUBSCRIBED_EVENTS) client.on(name, deliver)

  const submit = async (command: EslCommand, o: SubmitOptions): Promise<Result<SubmittedJob, PbxError>> => {
    if (closed || !connected) return err({ kind: 'disconnected' })
    const jobUuid = randomUUID()
    let resolve!: (r: Result<string, PbxError>) => void
    const result = new Promise<Result<string, PbxError>>((r) => (resolve = r))
    const job: PendingJob = { resolve, acceptedOn: undefined, timer: undefined }
    jobs.set(jobUuid, job)
    const reply = await client.sendBgapi(command, jobUuid, o.acceptTimeoutMs ?? opts.commandTimeoutMs)
    if (reply instanceof Error) {
      jobs.delete(jobUuid)
      return err(mapError(reply))
    }
    if (jobs.has(jobUuid)) {
      job.acceptedOn = generation
      job.timer = setTimeout(() => {
        if (jobs.delete(jobUuid)) resolve(err({ kind: 'timeout' }))
      }, o.resultTimeoutMs)
    }
    return ok({ jobUuid, result })
  }

  return {
    isConnected: () => connected && !closed,
    submit,
    async bgapi(command, timeoutMs) {
      const t = timeoutMs ?? opts.commandTimeoutMs
      const s = await submit(command, { acceptTimeoutMs: Math.min(t, opts.commandTimeoutMs), resultTimeoutMs: t })
      if (!s.ok) return s
      return s.value.result
    },
    async execute(uuid: string, app: EslApp, timeoutMs?: number): Promise<Result<FsEvent, PbxError>> {
      if (!PATTERNS.uuid.test(uuid)) return err({ kind: 'failed', reply: 'invalid uuid' })
      if (closed || !connected) return err({ kind: 'disconnected' })
      const r = await client.command_uuid(uuid, app.app, app.arg, timeoutMs ?? opts.commandTimeoutMs)
      if (r instanceof Error) return err(mapError(r))
      return ok(toFsEvent(r.body.data))
    },
    onEvent(listener) {
      eventListeners.add(listener)
      return () => eventListeners.delete(listener)
    },
    onConnected(listener) {
      connectedListeners.add(listener)
      return () => connectedListeners.delete(listener)
    },
    stats: () => ({ connections: generation, connected: connected && !closed, pendingJobs: jobs.size }),
    async close() {
      if (closed) return
      closed = true
      connected = false
      clearInterval(ticker)
      for (const [, job] of jobs) {
        clearTimeout(job.timer)
        job.resolve(err({ kind: 'disconnected' }))
      }
      jobs.clear()
      client.end()
      // Let esl-lite's loop see the end of its socket.
      await new Promise((r) => setImmediate(r))
    },
  }
}

