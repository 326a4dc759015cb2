/**
 * Test doubles of the IVR runner's dependencies:
 * - FakePbx: a PbxClient that records every application and command, answers each application
 *   with a CHANNEL_EXECUTE_COMPLETE (as FreeSWITCH does, with the channel's variables), and
 *   behaves like FreeSWITCH on hangup: CHANNEL_HANGUP first, then the running application
 *   completes (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt: EXECUTE_COMPLETE of
 *   park after HANGUP). A script decides per application: complete (with variables /
 *   Application-Response), hold until hangup, fail, or the caller hangs up while it runs. It
 *   creates no timers.
 * - FakeFetcher: documents and JSON by URL, every request and error report recorded; like the
 *   real fetcher created with `accept: acceptIvrDocument`, an invalid document makes the next
 *   URL of a list be tried.
 */
import { acceptIvrDocument } from '../../../src/ivr/runner/index.js'
import type { FetchedDocument, FetchError, HttpMethod, IvrFetcher } from '../../../src/ivr/fetch/fetcher.js'
import type { EslApp, EslCommand, FsEvent, InstantCommand, PbxClient, PbxError } from '../../../src/pbx/types.js'
import { err, ok, type Result } from '../../../src/util/result.js'

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

export type Script = (rec: ExecRecord, index: number) => ExecReply | undefined

interface Channel {
  answered: boolean
  up: boolean
  vars: Record<string, string>
  pending: Array<() => void>
}

export class FakePbx implements PbxClient {
  readonly executed: ExecRecord[] = []
  readonly commands: string[] = []
  private readonly listeners = new Set<(e: FsEvent) => void>()
  private readonly connectedListeners = new Set<() => void>()
  private readonly channels = new Map<string, Channel>()
  script: Script = () => undefined

  isConnected(): boolean {
    return true
  }

  listenerCount(): number {
    return this.listeners.size + this.connectedListeners.size
  }

  /** The ESL link came back (events of the outage are lost). */
  reconnected(): void {
    for (const l of [...this.connectedListeners]) l()
  }

  /** The applications run on a channel, as `app arg` lines. */
  apps(uuid?: string): string[] {
    return this.executed.filter((e) => uuid === undefined || e.uuid === uuid).map((e) => (e.arg === '' ? e.app : `${e.app} ${e.arg}`))
  }

  channel(uuid: string): Channel {
    let c = this.channels.get(uuid)
    if (c === undefined) {
      c = { answered: false, up: true, vars: {}, pending: [] }
      this.channels.set(uuid, c)
    }
    return c
  }

  isUp(uuid: string): boolean {
    return this.channel(uuid).up
  }

  emit(e: FsEvent): void {
    for (const l of [...this.listeners]) l(e)
  }

  private channelEvent(name: string, uuid: string, extra: Record<string, string> = {}): FsEvent {
    const c = this.channel(uuid)
    const vars: Record<string, string> = {}
    for (const [k, v] of Object.entries(c.vars)) vars[`variable_${k}`] = v
    return {
      'Event-Name': name,
      'Unique-ID': uuid,
      'Answer-State': c.up ? (c.answered ? 'answered' : 'ringing') : 'hangup',
      ...vars,
      ...extra,
    }
  }

  /** A channel parked by the dialplan for the IVR (the event carries its variables). */
  park(uuid: string, headers: Record<string, string>, vars: Record<string, string>, answered = true): void {
    const c = this.channel(uuid)
    c.answered = answered
    Object.assign(c.vars, vars)
    this.emit({ ...this.channelEvent('CHANNEL_PARK', uuid), 'Call-Direction': 'inbound', ...headers })
  }

  /** The far end hangs up (or uuid_kill): CHANNEL_HANGUP, then running applications complete. */
  hangup(uuid: string, cause = 'NORMAL_CLEARING'): void {
    const c = this.channel(uuid)
    if (!c.up) return
    c.up = false
    this.emit(this.channelEvent('CHANNEL_HANGUP', uuid, { 'Hangup-Cause': cause }))
    for (const p of c.pending.splice(0)) p()
  }

  async api(command: InstantCommand): Promise<Result<string, PbxError>> {
    return this.bgapi(command)
  }

  async bgapi(command: EslCommand): Promise<Result<string, PbxError>> {
    this.commands.push(command)
    const kill = /^uuid_kill (\S+)(?: (\S+))?$/.exec(command)
    if (kill !== null) {
      const uuid = kill[1] ?? ''
      if (!this.channels.has(uuid) || !this.channel(uuid).up) return ok('-ERR No such channel!\n')
      queueMicrotask(() => this.hangup(uuid, kill[2] ?? 'NORMAL_CLEARING'))
      return ok('+OK\n')
    }
    const getvar = /^uuid_getvar (\S+) (\S+)$/.exec(command)
    if (getvar !== null) {
      const c = this.channels.get(getvar[1] ?? '')
      return ok(c === undefined || !c.up ? '-ERR No such channel!\n' : (c.vars[getvar[2] ?? ''] ?? '_undef_'))
    }
    return ok('+OK\n')
  }

  async execute(uuid: string, a: EslApp): Promise<Result<FsEvent, PbxError>> {
    const rec: ExecRecord = { uuid, app: a.app, arg: a.arg }
    const index = this.executed.length
    this.executed.push(rec)
    const c = this.channel(uuid)
    if (!c.up) return err({ kind: 'failed', reply: 'invalid session id' })
    const reply = this.script(rec, index) ?? { kind: 'complete' }
    const complete = (response = '_none_'): FsEvent =>
      this.channelEvent('CHANNEL_EXECUTE_COMPLETE', uuid, {
        Application: a.app,
        'Application-Data': a.arg,
        'Application-Response': response,
      })
    const untilHangup = (): Promise<Result<FsEvent, PbxError>> =>
      new Promise((resolve) => {
        c.pending.push(() => resolve(ok(complete())))
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
        Object.assign(c.vars, reply.vars ?? {})
        // play_and_get_digits clears its variable when nothing was entered (switch_ivr_read).
        if (a.app === 'play_and_get_digits' && reply.vars?.cod_ivr_digits === undefined) delete c.vars.cod_ivr_digits
        return ok(complete(reply.response))
    }
  }

  onEvent(listener: (event: FsEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener)
    return () => this.connectedListeners.delete(listener)
  }

  async close(): Promise<void> {}
}

export interface FetchRecord {
  readonly kind: 'document' | 'json'
  readonly urls: readonly string[]
  readonly params: Readonly<Record<string, string>>
  readonly method: HttpMethod
}

const httpError = (url: string, status: number): FetchError => ({ kind: 'http_status', url, status, message: `HTTP ${status}` })

export class FakeFetcher implements IvrFetcher {
  readonly docs = new Map<string, string>()
  readonly json = new Map<string, unknown>()
  readonly requests: FetchRecord[] = []
  readonly reports: Array<{ url: string; params: Readonly<Record<string, string>>; error: string | undefined }> = []

  async fetchDocument(urls: readonly string[], params: Readonly<Record<string, string>>, method: HttpMethod = 'POST'): Promise<Result<FetchedDocument, FetchError>> {
    this.requests.push({ kind: 'document', urls: [...urls], params: { ...params }, method })
    const attempts: FetchError[] = []
    for (const url of urls) {
      const body = this.docs.get(url)
      if (body === undefined) {
        attempts.push(httpError(url, 404))
        continue
      }
      const verdict = acceptIvrDocument(body)
      if (!verdict.ok) {
        attempts.push({ kind: 'invalid_body', url, message: `invalid document: ${verdict.error}` })
        continue
      }
      return ok({ url, requestedUrl: url, body, contentType: 'text/xml' })
    }
    const last = attempts[attempts.length - 1] ?? httpError('', 404)
    return err(attempts.length > 1 ? { ...last, message: attempts.map((a) => a.message).join('; '), attempts } : last)
  }

  async fetchJson(url: string, params: Readonly<Record<string, string>>, method: HttpMethod = 'POST'): Promise<Result<unknown, FetchError>> {
    this.requests.push({ kind: 'json', urls: [url], params: { ...params }, method })
    if (!this.json.has(url)) return err(httpError(url, 500))
    return ok(this.json.get(url))
  }

  async reportError(url: string, params: Readonly<Record<string, string>>, error?: string): Promise<void> {
    this.reports.push({ url, params: { ...params }, error })
  }

  /** Hosts whose media URLs the address guard would refuse. */
  readonly blockedHosts = new Set<string>()

  async checkTarget(url: string): Promise<Result<void, FetchError>> {
    const host = new URL(url).hostname
    return this.blockedHosts.has(host) ? err({ kind: 'blocked_address', url, message: `${host}: not allowed` }) : ok(undefined)
  }
}
