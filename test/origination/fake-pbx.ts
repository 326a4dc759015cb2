/**
 * A scripted PbxClient for unit tests: records every command, answers sofia_contact from a
 * table, accepts originates at once and lets the test decide what FreeSWITCH reports (events
 * with FreeSWITCH's header names, job bodies as in the captures).
 */
import type { EslApp, EslCommand, FsEvent, InstantCommand, PbxClient, PbxError } from '../../src/pbx/types.js'
import type { PbxJobSubmitter, SubmitOptions, SubmittedJob } from '../../src/pbx/submit.js'
import { err, ok, type Result } from '../../src/util/result.js'
import { parseOriginate } from '../pbx/fs-model.js'

export interface FakeJob {
  readonly command: string
  resolve(r: Result<string, PbxError>): void
  readonly legs: readonly string[]
  readonly globals: ReadonlyMap<string, string>
  readonly legVars: ReadonlyArray<ReadonlyMap<string, string>>
}

export class FakePbx implements PbxClient, PbxJobSubmitter {
  connected = true
  readonly commands: string[] = []
  readonly jobs: FakeJob[] = []
  /** `user@domain` → contacts. */
  readonly contacts = new Map<string, string[]>()
  /** Live channels for `show channels as json` and uuid_getvar: uuid → vars. */
  readonly live = new Map<string, { answered: boolean; vars: Record<string, string> }>()
  /** Answer submit() with this instead of accepting. */
  refuseSubmit: PbxError | undefined
  /** submit() waits for this before answering (FreeSWITCH slow to accept). */
  holdSubmit: Promise<void> | undefined
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
      case 'uuid_kill': {
        const uuid = args[0] ?? ''
        if (!this.live.has(uuid)) return ok('-ERR No such channel!\n')
        this.hangup(uuid, args[1] ?? 'NORMAL_CLEARING')
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

  async execute(_uuid: string, _app: EslApp): Promise<Result<FsEvent, PbxError>> {
    return err({ kind: 'failed', reply: 'not in the fake' })
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

  emit(event: FsEvent): void {
    for (const l of [...this.eventListeners]) l(event)
  }

  /** Simulates a reconnection: listeners resynchronise. */
  reconnect(): void {
    this.connected = true
    for (const l of [...this.connectedListeners]) l()
  }

  originates(): FakeJob[] {
    return this.jobs.filter((j) => j.command.startsWith('originate '))
  }

  /** CHANNEL_CREATE for a leg of a job, with its variables as FreeSWITCH reports them. */
  create(job: FakeJob, uuid: string, extra: Record<string, string> = {}): void {
    const i = job.legs.indexOf(uuid)
    const vars: Record<string, string> = {}
    for (const [k, v] of job.globals) vars[k] = v
    for (const [k, v] of job.legVars[i] ?? new Map<string, string>()) vars[k] = v
    this.live.set(uuid, { answered: false, vars })
    this.emit({
      'Event-Name': 'CHANNEL_CREATE',
      'Unique-ID': uuid,
      'Answer-State': 'ringing',
      'Call-Direction': 'outbound',
      ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`variable_${k}`, v])),
      ...extra,
    })
  }

  /** A channel not made through the API (e.g. a phone calling), in a domain. */
  inbound(uuid: string, domain: string): void {
    this.live.set(uuid, { answered: false, vars: { domain_name: domain } })
    this.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': uuid, 'Answer-State': 'ringing', variable_domain_name: domain })
  }

  answer(uuid: string): void {
    const c = this.live.get(uuid)
    if (c !== undefined) c.answered = true
    this.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': uuid, 'Answer-State': 'answered' })
  }

  hangup(uuid: string, cause: string): void {
    this.live.delete(uuid)
    this.emit({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': uuid, 'Answer-State': 'hangup', 'Hangup-Cause': cause })
    this.emit({ 'Event-Name': 'CHANNEL_HANGUP_COMPLETE', 'Unique-ID': uuid, 'Answer-State': 'hangup', 'Hangup-Cause': cause })
    this.emit({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': uuid, 'Answer-State': 'hangup', 'Hangup-Cause': cause })
  }
}

/** Lets pending promise callbacks run. */
export const flush = async (rounds = 5): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r))
}
