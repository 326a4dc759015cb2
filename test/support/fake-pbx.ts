/**
 * The one fake of FreeSWITCH (PbxClient, src/pbx/types.ts) for unit tests. It behaves as
 * FreeSWITCH 1.10.12 does where the daemon can tell, with FreeSWITCH's header names, job bodies
 * and replies as in the captures (test/fixtures/freeswitch/esl/):
 * - every command is recorded (`commands`); `api` prints `-ERR no reply` for an empty output
 *   (mod_event_socket.c api_exec), `bgapi` returns the job body verbatim;
 * - live channels answer `show channels as json`, `uuid_getvar` (`_undef_` for an unset
 *   variable, `-ERR No such channel!` for a gone channel) and `uuid_kill` (the channel hangs up);
 * - `sofia_contact` answers from `contacts` (`error/user_not_registered` for none), `hash`
 *   from `hash` as mod_hash does (`select` of no key prints nothing);
 * - originates are accepted at once (`submit`) and the test decides what FreeSWITCH reports:
 *   the job body (`FakeJob.resolve`) and the legs' events (`create`, `answer`, `hangup`);
 * - an application (`execute`) completes with a CHANNEL_EXECUTE_COMPLETE carrying the
 *   channel's variables unless `script` says otherwise; on hangup CHANNEL_HANGUP comes first,
 *   then the running application completes (06-originate-sofia-contact.txt: EXECUTE_COMPLETE of
 *   park after HANGUP), then CHANNEL_HANGUP_COMPLETE and CHANNEL_DESTROY.
 * - `reply`, when set, answers every bgapi/api instead (a test that scripts FreeSWITCH's
 *   answers command by command).
 * It creates no timers, so it runs as well on a fake clock (test/support/fake-clock.ts).
 */
import type { EslApp, EslCommand, FsEvent, InstantCommand, PbxClient, PbxError } from '../../src/pbx/types.js'
import type { PbxJobSubmitter, SubmitOptions, SubmittedJob } from '../../src/pbx/submit.js'
import { err, ok, type Result } from '../../src/util/result.js'
import { parseOriginate } from '../pbx/fs-model.js'

/** mod_hash's usage line (src/sim/api/hash.ts). */
const USAGE = '-ERR Usage: hash [insert|delete|select]/<realm>/<key>/<val>\n'

export interface FakeJob {
  readonly command: string
  resolve(r: Result<string, PbxError>): void
  readonly legs: readonly string[]
  readonly globals: ReadonlyMap<string, string>
  readonly legVars: ReadonlyArray<ReadonlyMap<string, string>>
}

/** A channel FreeSWITCH holds: whether it was answered and its variables. */
export interface FakeChannel {
  answered: boolean
  vars: Record<string, string>
}

export interface ExecRecord {
  readonly uuid: string
  readonly app: string
  readonly arg: string
}

export type ExecReply =
  | { readonly kind: 'complete'; readonly vars?: Readonly<Record<string, string>>; readonly response?: string }
  /** Stays running until the channel hangs up. */
  | { readonly kind: 'hold' }
  | { readonly kind: 'fail'; readonly error: PbxError }
  /** The caller hangs up while this application runs. */
  | { readonly kind: 'hangup'; readonly cause?: string }
  /** The application connects the call (bridge): CHANNEL_BRIDGE, then, once the call ends, completes. */
  | { readonly kind: 'bridged'; readonly vars?: Readonly<Record<string, string>> }

/** Decides how an application ends; undefined: it completes. */
export type Script = (rec: ExecRecord, index: number) => ExecReply | undefined

export class FakePbx implements PbxClient, PbxJobSubmitter {
  connected = true
  /** Every command given, bgapi, api and submit alike, as sent. */
  readonly commands: string[] = []
  readonly jobs: FakeJob[] = []
  /** Every application executed, in order. */
  readonly executed: ExecRecord[] = []
  /** `user@domain` → contacts. */
  readonly contacts = new Map<string, string[]>()
  /** mod_hash's table, by `realm/key` (leg records: pbx/leg-record.ts). */
  readonly hash = new Map<string, string>()
  /** Channels FreeSWITCH holds now, by uuid (a test may add or change one behind the daemon's back). */
  readonly live = new Map<string, FakeChannel>()
  /** Answer submit() with this instead of accepting. */
  refuseSubmit: PbxError | undefined
  /** submit() waits for this before answering (FreeSWITCH slow to accept). */
  holdSubmit: Promise<void> | undefined
  /** When set, answers every bgapi and api instead of the model above. */
  reply: ((command: string) => Result<string, PbxError>) | undefined
  script: Script = () => undefined
  /** Channels that hung up: an application on one fails, a second hangup does nothing. */
  private readonly gone = new Set<string>()
  /** Applications waiting for their channel's hangup to complete, by uuid. */
  private readonly pending = new Map<string, Array<() => void>>()
  private readonly eventListeners = new Set<(e: FsEvent) => void>()
  private readonly connectedListeners = new Set<() => void>()

  isConnected(): boolean {
    return this.connected
  }

  async submit(command: EslCommand, _opts: SubmitOptions): Promise<Result<SubmittedJob, PbxError>> {
    this.commands.push(command)
    if (this.holdSubmit !== undefined) await this.holdSubmit
    if (!this.connected) return err({ kind: 'disconnected' })
    if (this.refuseSubmit !== undefined) return err(this.refuseSubmit)
    let resolve!: (r: Result<string, PbxError>) => void
    const result = new Promise<Result<string, PbxError>>((r) => (resolve = r))
    const p = command.startsWith('originate ') ? parseOriginate(command) : undefined
    const legs = p?.groups.flatMap((g) => g.map((l) => l.vars.get('origination_uuid') ?? '')) ?? []
    this.jobs.push({
      command,
      resolve,
      legs,
      globals: p?.globals ?? new Map(),
      legVars: p?.groups.flatMap((g) => g.map((l) => l.vars)) ?? [],
    })
    await Promise.resolve()
    return ok({ jobUuid: `job-${this.jobs.length}`, result })
  }

  async bgapi(command: EslCommand, _timeoutMs?: number): Promise<Result<string, PbxError>> {
    this.commands.push(command)
    if (this.reply !== undefined) return this.reply(command)
    if (!this.connected) return err({ kind: 'disconnected' })
    await Promise.resolve()
    const [verb, ...args] = command.split(' ')
    switch (verb) {
      case 'sofia_contact': {
        const key = (args[0] ?? '').replace(/^[^/]*\//, '')
        const list = this.contacts.get(key)
        return ok(list === undefined || list.length === 0 ? 'error/user_not_registered' : list.join(','))
      }
      case 'show': {
        const rows = [...this.live.entries()].map(([uuid, c]) => ({ uuid, callstate: c.answered ? 'ACTIVE' : 'RINGING' }))
        return ok(rows.length === 0 ? '{"row_count": 0}\n' : JSON.stringify({ row_count: rows.length, rows }))
      }
      case 'uuid_getvar': {
        const c = this.live.get(args[0] ?? '')
        if (c === undefined) return ok('-ERR No such channel!\n')
        return ok(c.vars[args[1] ?? ''] ?? '_undef_')
      }
      case 'hash':
        return ok(this.hashApi(args.join(' ')))
      case 'uuid_kill': {
        const uuid = args[0] ?? ''
        if (!this.live.has(uuid)) return ok('-ERR No such channel!\n')
        // The channel hangs up as the reply goes out (its events reach us right after).
        queueMicrotask(() => this.hangup(uuid, args[1] ?? 'NORMAL_CLEARING'))
        return ok('+OK\n')
      }
      default:
        return ok('+OK\n')
    }
  }

  /** The instant commands answer as with bgapi; `api` prints `-ERR no reply` for no output (mod_event_socket.c api_exec). */
  async api(command: InstantCommand, timeoutMs?: number): Promise<Result<string, PbxError>> {
    const r = await this.bgapi(command, timeoutMs)
    return r.ok && r.value === '' ? ok('-ERR no reply\n') : r
  }

  async execute(uuid: string, a: EslApp, _timeoutMs?: number): Promise<Result<FsEvent, PbxError>> {
    const rec: ExecRecord = { uuid, app: a.app, arg: a.arg }
    const index = this.executed.length
    this.executed.push(rec)
    if (this.gone.has(uuid)) return err({ kind: 'failed', reply: 'invalid session id' })
    const c = this.channel(uuid)
    const reply = this.script(rec, index) ?? { kind: 'complete' }
    const complete = (response = '_none_'): FsEvent =>
      this.channelEvent('CHANNEL_EXECUTE_COMPLETE', uuid, {
        Application: a.app,
        'Application-Data': a.arg,
        'Application-Response': response,
      })
    const untilHangup = (): Promise<Result<FsEvent, PbxError>> =>
      new Promise((resolve) => {
        const list = this.pending.get(uuid) ?? []
        list.push(() => resolve(ok(complete())))
        this.pending.set(uuid, list)
      })
    switch (reply.kind) {
      case 'fail':
        return err(reply.error)
      case 'hold':
        return untilHangup()
      case 'hangup': {
        const done = untilHangup()
        queueMicrotask(() => this.hangup(uuid, reply.cause))
        return done
      }
      case 'bridged': {
        Object.assign(c.vars, reply.vars ?? {})
        if (!c.answered) {
          c.answered = true
          this.emit(this.channelEvent('CHANNEL_ANSWER', uuid))
        }
        this.emit(this.channelEvent('CHANNEL_BRIDGE', uuid, { 'Bridge-A-Unique-ID': uuid, 'Bridge-B-Unique-ID': 'b0000000-0000-4000-8000-000000000000' }))
        // The connected call ends: hangup_after_bridge hangs the channel up, then bridge completes.
        const done = untilHangup()
        queueMicrotask(() => this.hangup(uuid, 'NORMAL_CLEARING'))
        return done
      }
      case 'complete':
        if (a.app === 'answer' && !c.answered) {
          c.answered = true
          this.emit(this.channelEvent('CHANNEL_ANSWER', uuid, { 'Caller-Channel-Answered-Time': '1795327686302035' }))
        }
        if (a.app === 'set') {
          const eq = a.arg.indexOf('=')
          if (eq > 0) c.vars[a.arg.slice(0, eq)] = a.arg.slice(eq + 1)
        }
        // unset removes a variable; play_and_detect_speech clears its result when it starts
        // (mod_dptools.c; test/fixtures/freeswitch/esl/40-42).
        if (a.app === 'unset') delete c.vars[a.arg.trim()]
        if (a.app === 'play_and_detect_speech') delete c.vars.detect_speech_result
        Object.assign(c.vars, reply.vars ?? {})
        // play_and_get_digits clears its variable when nothing was entered (switch_ivr_read).
        if (a.app === 'play_and_get_digits' && reply.vars?.cod_ivr_digits === undefined) delete c.vars.cod_ivr_digits
        return ok(complete(reply.response))
    }
  }

  onEvent(listener: (e: FsEvent) => void): () => void {
    this.eventListeners.add(listener)
    return () => this.eventListeners.delete(listener)
  }

  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener)
    return () => this.connectedListeners.delete(listener)
  }

  async close(): Promise<void> {}

  // ---- test controls -------------------------------------------------------------------

  /**
   * Sends events to the daemon. FreeSWITCH holds the channels it reports: a channel event of a
   * channel the fake did not know makes it live (with the event's answer state and variables),
   * CHANNEL_DESTROY makes it gone, so a command on it is answered as FreeSWITCH would.
   */
  emit(...events: FsEvent[]): void {
    for (const e of events) {
      this.follow(e)
      for (const l of [...this.eventListeners]) l(e)
    }
  }

  /** Simulates a reconnection (events of the outage are lost): listeners resynchronise. */
  reconnect(): void {
    this.connected = true
    for (const l of [...this.connectedListeners]) l()
  }

  /** Subscriptions still open (a closed component leaves none). */
  listenerCount(): number {
    return this.eventListeners.size + this.connectedListeners.size
  }

  originates(): FakeJob[] {
    return this.jobs.filter((j) => j.command.startsWith('originate '))
  }

  /** The live channel `uuid`; one the fake never heard of is taken as up (e.g. parked by a test's own events). */
  channel(uuid: string): FakeChannel {
    let c = this.live.get(uuid)
    if (c === undefined) {
      c = { answered: false, vars: {} }
      if (!this.gone.has(uuid)) this.live.set(uuid, c)
    }
    return c
  }

  isUp(uuid: string): boolean {
    return !this.gone.has(uuid) && this.live.has(uuid)
  }

  /** The applications run on a channel, as `app arg` lines. */
  apps(uuid?: string): string[] {
    return this.executed.filter((e) => uuid === undefined || e.uuid === uuid).map((e) => (e.arg === '' ? e.app : `${e.app} ${e.arg}`))
  }

  /** CHANNEL_CREATE for a leg of a job, with its variables as FreeSWITCH reports them. */
  create(job: FakeJob, uuid: string, extra: Record<string, string> = {}): void {
    const i = job.legs.indexOf(uuid)
    const vars: Record<string, string> = {}
    for (const [k, v] of job.globals) vars[k] = v
    for (const [k, v] of job.legVars[i] ?? new Map<string, string>()) vars[k] = v
    this.live.set(uuid, { answered: false, vars })
    this.emit({ ...this.channelEvent('CHANNEL_CREATE', uuid), 'Call-Direction': 'outbound', ...extra })
  }

  /** A channel not made through the API (e.g. a phone calling), in a domain. */
  inbound(uuid: string, domain: string): void {
    this.live.set(uuid, { answered: false, vars: { domain_name: domain } })
    this.emit(this.channelEvent('CHANNEL_CREATE', uuid))
  }

  /** A channel parked by the dialplan for the IVR (the event carries its variables). */
  park(uuid: string, headers: Record<string, string>, vars: Record<string, string>, answered = true): void {
    const c = this.channel(uuid)
    c.answered = answered
    Object.assign(c.vars, vars)
    this.emit({ ...this.channelEvent('CHANNEL_PARK', uuid), 'Call-Direction': 'inbound', ...headers })
  }

  answer(uuid: string): void {
    const c = this.live.get(uuid)
    if (c !== undefined) c.answered = true
    this.emit(this.channelEvent('CHANNEL_ANSWER', uuid, { 'Answer-State': 'answered' }))
  }

  /**
   * The far end hangs up (or uuid_kill): CHANNEL_HANGUP, then running applications complete,
   * then CHANNEL_HANGUP_COMPLETE and CHANNEL_DESTROY. A channel hangs up once.
   */
  hangup(uuid: string, cause = 'NORMAL_CLEARING'): void {
    if (this.gone.has(uuid)) return
    const event = (name: string): FsEvent => this.channelEvent(name, uuid, { 'Answer-State': 'hangup', 'Hangup-Cause': cause })
    this.emit(event('CHANNEL_HANGUP'))
    this.gone.add(uuid)
    for (const p of this.pending.get(uuid) ?? []) p()
    this.pending.delete(uuid)
    this.emit(event('CHANNEL_HANGUP_COMPLETE'), event('CHANNEL_DESTROY'))
    this.live.delete(uuid)
  }

  /** The channel ended unheard (while the link was down): no event, it is just gone. */
  vanish(uuid: string): void {
    this.gone.add(uuid)
    this.live.delete(uuid)
  }

  /** mod_hash as src/sim/api/hash.ts models it: `select` of no key prints nothing (so `api` says `-ERR no reply`). */
  private hashApi(arg: string): string {
    const [op, realm, key, ...value] = arg.split('/')
    if (op === undefined || realm === undefined || key === undefined) return USAGE
    const k = `${realm}/${key}`
    switch (op) {
      case 'insert':
        if (value.length === 0) return USAGE
        this.hash.set(k, value.join('/'))
        return '+OK\n'
      case 'delete':
        return this.hash.delete(k) ? '+OK\n' : '-ERR Not found\n'
      case 'select':
        return this.hash.get(k) ?? ''
      default:
        return USAGE
    }
  }

  private follow(e: FsEvent): void {
    const uuid = e['Unique-ID']
    const name = e['Event-Name'] ?? ''
    if (uuid === undefined || !name.startsWith('CHANNEL_') || this.gone.has(uuid)) return
    if (name === 'CHANNEL_DESTROY') {
      this.vanish(uuid)
      return
    }
    const c = this.live.get(uuid) ?? { answered: false, vars: {} }
    if (e['Answer-State'] === 'answered') c.answered = true
    for (const [k, v] of Object.entries(e)) if (k.startsWith('variable_') && v !== undefined) c.vars[k.slice('variable_'.length)] = v
    this.live.set(uuid, c)
  }

  /** An event of a channel with its variables (`variable_*`), as FreeSWITCH sends every channel event. */
  private channelEvent(name: string, uuid: string, extra: Record<string, string> = {}): FsEvent {
    const c = this.live.get(uuid)
    const vars: Record<string, string> = {}
    for (const [k, v] of Object.entries(c?.vars ?? {})) vars[`variable_${k}`] = v
    return {
      'Event-Name': name,
      'Unique-ID': uuid,
      'Answer-State': c?.answered === true ? 'answered' : 'ringing',
      ...vars,
      ...extra,
    }
  }
}

/** Origination and channel tests take flush() from here, with the fake. */
export { flush } from './wait.js'
