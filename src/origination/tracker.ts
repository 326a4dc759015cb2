/**
 * The call tracker: follows FreeSWITCH channel events by Unique-ID and keeps, per channel, its
 * domain, the request it belongs to (our `cod_*` variables), and whether it is ringing, answered
 * or gone. It counts live channels per domain for the channel limit, and publishes every change
 * as a stream (onChange) that the engine, and later CTI, consume.
 *
 * After every (re)connection it re-reads the live channels (`show channels as json`, capture 03)
 * because events sent while the socket was down are lost: channels that ended meanwhile are
 * reported gone, channels created meanwhile are added (their cod_* variables read with
 * `uuid_getvar`). The changes it synthesises carry `resync: true`.
 *
 * A channel counts as live from CHANNEL_CREATE until CHANNEL_HANGUP (FreeSWITCH keeps a hung-up
 * channel a little longer, until CHANNEL_DESTROY, but it will not ring or talk again; counting it
 * would make a hunt briefly count its previous member's legs with the next member's).
 */
import { performance } from 'node:perf_hooks'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'

/** The `cod_*` channel variables and the event headers that carry them. */
const COD_VAR_HEADERS: ReadonlyArray<readonly [string, string]> = Object.values(CHANNEL_VARS).map((name) => [name, `variable_${name}`])
import * as commands from '../pbx/commands.js'
import { parseShowChannels, rowAnswered, type ChannelRow } from '../pbx/replies.js'
import type { FsEvent, PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'

export type ChannelState = 'ringing' | 'answered' | 'hangup'

export interface TrackedChannel {
  readonly uuid: string
  /** Lower-case domain, when known (cod_domain, else domain_name / dialed_domain / presence host / other leg). */
  readonly domain: string | undefined
  /** cod_request_id: the API request that created this leg (also on dialplan legs when exported). */
  readonly requestId: string | undefined
  /** cod_role: `originator` for our originated legs, `destination` for dialplan legs. */
  readonly role: string | undefined
  readonly state: ChannelState
  /** Whether the channel was ever answered. */
  readonly answered: boolean
  readonly hangupCause: string | undefined
  /** Other-Leg-Unique-ID while bridged. */
  readonly bridgedTo: string | undefined
  readonly direction: string | undefined
  readonly callerIdNumber: string | undefined
  readonly destinationNumber: string | undefined
  /** Every `cod_*` variable seen on the channel (without the `variable_` prefix). */
  readonly vars: Readonly<Record<string, string>>
  /** performance.now() of the first sighting. */
  readonly createdAt: number
}

export type ChangeKind =
  | 'created'
  | 'progress'
  | 'answered'
  | 'bridged'
  | 'unbridged'
  | 'parked'
  | 'execute_complete'
  | 'dtmf'
  | 'hangup'
  | 'destroyed'

export interface ChannelChange {
  readonly kind: ChangeKind
  readonly channel: TrackedChannel
  /** The FreeSWITCH event (absent for changes synthesised by a resynchronisation). */
  readonly event?: FsEvent
  readonly resync?: boolean
}

export interface CallTracker {
  liveChannelCount(domain: string): number
  get(uuid: string): TrackedChannel | undefined
  /** Live (not hung up) channels, of one domain or all. */
  liveChannels(domain?: string): TrackedChannel[]
  onChange(listener: (c: ChannelChange) => void): () => void
  /** Called after each resynchronisation, with the performance.now() at which it started. */
  onResynced(listener: (startedAt: number) => void): () => void
  /** Re-reads FreeSWITCH's live channels; a call while one runs schedules one more after it. */
  resync(): Promise<Result<void, string>>
  close(): void
}

interface MutableChannel {
  uuid: string
  domain: string | undefined
  requestId: string | undefined
  role: string | undefined
  state: ChannelState
  answered: boolean
  hangupCause: string | undefined
  bridgedTo: string | undefined
  direction: string | undefined
  callerIdNumber: string | undefined
  destinationNumber: string | undefined
  vars: Record<string, string>
  createdAt: number
  /** performance.now() of the last event: a resync only removes channels not heard of since it began. */
  lastSeen: number
}

const KIND_OF_EVENT: Readonly<Record<string, ChangeKind>> = {
  CHANNEL_CREATE: 'created',
  CHANNEL_PROGRESS: 'progress',
  CHANNEL_PROGRESS_MEDIA: 'progress',
  CHANNEL_ANSWER: 'answered',
  CHANNEL_BRIDGE: 'bridged',
  CHANNEL_UNBRIDGE: 'unbridged',
  CHANNEL_PARK: 'parked',
  CHANNEL_EXECUTE_COMPLETE: 'execute_complete',
  DTMF: 'dtmf',
  CHANNEL_HANGUP: 'hangup',
  CHANNEL_HANGUP_COMPLETE: 'hangup',
  CHANNEL_DESTROY: 'destroyed',
}

const hostOf = (s: string | undefined): string | undefined => {
  if (s === undefined) return undefined
  const at = s.lastIndexOf('@')
  return at >= 0 && at < s.length - 1 ? s.slice(at + 1) : undefined
}

const lower = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s.toLowerCase())

export interface TrackerDeps {
  readonly pbx: PbxClient
  readonly logger: Logger
  readonly commandTimeoutMs?: number
}

export function createTracker(deps: TrackerDeps): CallTracker {
  const { pbx, logger: log } = deps
  const timeoutMs = deps.commandTimeoutMs ?? 5000
  const channels = new Map<string, MutableChannel>()
  const live = new Map<string, Set<string>>()
  const listeners = new Set<(c: ChannelChange) => void>()
  const resyncListeners = new Set<(startedAt: number) => void>()
  /**
   * Channels destroyed in the last minute: a late event must not bring one back as a live
   * channel, nor a `show channels` read before its destruction.
   */
  const recentlyDestroyed = new Map<string, number>()
  const markDestroyed = (uuid: string) => {
    const now = performance.now()
    recentlyDestroyed.delete(uuid)
    recentlyDestroyed.set(uuid, now)
    for (const [u, at] of recentlyDestroyed) {
      if (now - at < 60_000) break
      recentlyDestroyed.delete(u)
    }
  }

  const snapshot = (c: MutableChannel): TrackedChannel => ({ ...c, vars: { ...c.vars } })

  const emit = (change: ChannelChange) => {
    for (const l of [...listeners]) {
      try {
        l(change)
      } catch (e) {
        log.error({ err: e, kind: change.kind }, 'tracker listener failed')
      }
    }
  }

  /** Keeps the per-domain live sets in step with a channel's domain and state. */
  const index = (c: MutableChannel, previousDomain: string | undefined) => {
    if (previousDomain !== undefined && previousDomain !== c.domain) live.get(previousDomain)?.delete(c.uuid)
    if (c.domain === undefined) return
    let set = live.get(c.domain)
    if (set === undefined) {
      set = new Set()
      live.set(c.domain, set)
    }
    if (c.state === 'hangup') set.delete(c.uuid)
    else set.add(c.uuid)
  }

  const unindex = (c: MutableChannel) => {
    if (c.domain !== undefined) live.get(c.domain)?.delete(c.uuid)
  }

  const domainFromEvent = (e: FsEvent): string | undefined => {
    const other = e['Other-Leg-Unique-ID']
    return lower(
      e[`variable_${CHANNEL_VARS.domain}`] ??
        e.variable_domain_name ??
        e.variable_dialed_domain ??
        hostOf(e.variable_presence_id) ??
        (other !== undefined ? channels.get(other)?.domain : undefined) ??
        e.variable_sip_to_host,
    )
  }

  const absorb = (c: MutableChannel, e: FsEvent) => {
    // Only our own variables are read, by name: walking all ~75 headers of every event was the
    // tracker's largest cost in the API benchmark (docs/bench.md).
    for (const [name, header] of COD_VAR_HEADERS) {
      const v = e[header]
      if (v !== undefined) c.vars[name] = v
    }
    c.requestId = c.vars[CHANNEL_VARS.requestId] ?? c.requestId
    c.role = c.vars[CHANNEL_VARS.role] ?? c.role
    c.domain = c.domain ?? domainFromEvent(e)
    c.direction = c.direction ?? e['Call-Direction']
    c.callerIdNumber = e['Caller-Caller-ID-Number'] ?? c.callerIdNumber
    c.destinationNumber = e['Caller-Destination-Number'] ?? c.destinationNumber
  }

  const handle = (e: FsEvent) => {
    const name = e['Event-Name']
    if (name === undefined) return
    const kind = KIND_OF_EVENT[name]
    const uuid = e['Unique-ID']
    if (kind === undefined || uuid === undefined || uuid === '') return
    const now = performance.now()
    let c = channels.get(uuid)
    if (c === undefined) {
      // A DESTROY of a channel we never saw, or a late event of one already gone: nothing to count.
      if (kind === 'destroyed') {
        markDestroyed(uuid)
        return
      }
      if (recentlyDestroyed.has(uuid)) return
      c = {
        uuid,
        domain: undefined,
        requestId: undefined,
        role: undefined,
        state: 'ringing',
        answered: false,
        hangupCause: undefined,
        bridgedTo: undefined,
        direction: undefined,
        callerIdNumber: undefined,
        destinationNumber: undefined,
        vars: {},
        createdAt: now,
        lastSeen: now,
      }
      channels.set(uuid, c)
      const previous = c.domain
      absorb(c, e)
      if (e['Answer-State'] === 'answered') c.answered = true
      index(c, previous)
      // Seen first through a later event (created while the socket was down): report the creation.
      if (kind !== 'created') emit({ kind: 'created', channel: snapshot(c), event: e })
    } else {
      const previous = c.domain
      absorb(c, e)
      index(c, previous)
    }
    c.lastSeen = now
    switch (kind) {
      case 'answered':
        c.answered = true
        if (c.state === 'ringing') c.state = 'answered'
        break
      case 'bridged':
        c.bridgedTo = e['Other-Leg-Unique-ID']
        break
      case 'unbridged':
        c.bridgedTo = undefined
        break
      case 'hangup': {
        const first = c.state !== 'hangup'
        c.state = 'hangup'
        c.hangupCause = e['Hangup-Cause'] ?? e.variable_hangup_cause ?? c.hangupCause
        index(c, c.domain)
        // HANGUP and HANGUP_COMPLETE both map here; report the end once.
        if (!first) return
        break
      }
      case 'destroyed':
        c.state = 'hangup'
        c.hangupCause = c.hangupCause ?? e['Hangup-Cause']
        unindex(c)
        channels.delete(uuid)
        markDestroyed(uuid)
        break
      default:
        break
    }
    emit({ kind, channel: snapshot(c), event: e })
  }

  const unsubscribeEvents = pbx.onEvent(handle)

  const getVar = async (uuid: string, name: string): Promise<string | undefined | null> => {
    const cmd = commands.uuidGetVar(uuid, name)
    if (!cmd.ok) return null
    const r = await pbx.bgapi(cmd.value, timeoutMs)
    if (!r.ok) return null
    const v = r.value.replace(/\n$/, '')
    if (v.startsWith('-ERR')) return null // the channel is gone
    return v === '_undef_' || v === '' ? undefined : v
  }

  const adopt = async (row: ChannelRow) => {
    const [domain, requestId, role] = await Promise.all([
      getVar(row.uuid, CHANNEL_VARS.domain),
      getVar(row.uuid, CHANNEL_VARS.requestId),
      getVar(row.uuid, CHANNEL_VARS.role),
    ])
    return { row, gone: domain === null, domain, requestId, role }
  }

  const runResync = async (): Promise<Result<void, string>> => {
    const startedAt = performance.now()
    const cmd = commands.showChannelsJson()
    if (!cmd.ok) return err(cmd.error.reason)
    const r = await pbx.bgapi(cmd.value, timeoutMs)
    if (!r.ok) return err(`show channels failed: ${r.error.kind}`)
    const rows = parseShowChannels(r.value)
    if (!rows.ok) return err(rows.error)
    const listed = new Set(rows.value.map((x) => x.uuid))

    // Gone while we were not listening.
    for (const c of [...channels.values()]) {
      if (listed.has(c.uuid) || c.lastSeen >= startedAt) continue
      c.state = 'hangup'
      unindex(c)
      channels.delete(c.uuid)
      markDestroyed(c.uuid)
      emit({ kind: 'destroyed', channel: snapshot(c), resync: true })
    }
    // Answered while we were not listening.
    for (const row of rows.value) {
      const c = channels.get(row.uuid)
      if (c !== undefined && !c.answered && rowAnswered(row) && c.state !== 'hangup') {
        c.answered = true
        c.state = 'answered'
        emit({ kind: 'answered', channel: snapshot(c), resync: true })
      }
    }
    // Created while we were not listening: read our variables, a few channels at a time.
    const unknown = rows.value.filter((row) => !channels.has(row.uuid))
    const adopted: Awaited<ReturnType<typeof adopt>>[] = []
    for (let i = 0; i < unknown.length; i += 16) {
      adopted.push(...(await Promise.all(unknown.slice(i, i + 16).map(adopt))))
    }
    for (const a of adopted) {
      if (a.gone || channels.has(a.row.uuid) || recentlyDestroyed.has(a.row.uuid)) continue
      const now = performance.now()
      const vars: Record<string, string> = {}
      if (typeof a.domain === 'string') vars[CHANNEL_VARS.domain] = a.domain
      if (typeof a.requestId === 'string') vars[CHANNEL_VARS.requestId] = a.requestId
      if (typeof a.role === 'string') vars[CHANNEL_VARS.role] = a.role
      const c: MutableChannel = {
        uuid: a.row.uuid,
        domain: lower(a.domain ?? hostOf(a.row.presence_id)),
        requestId: a.requestId ?? undefined,
        role: a.role ?? undefined,
        state: rowAnswered(a.row) ? 'answered' : 'ringing',
        answered: rowAnswered(a.row),
        hangupCause: undefined,
        bridgedTo: undefined,
        direction: a.row.direction,
        callerIdNumber: a.row.cid_num,
        destinationNumber: a.row.dest,
        vars,
        createdAt: now,
        lastSeen: now,
      }
      channels.set(c.uuid, c)
      index(c, undefined)
      emit({ kind: 'created', channel: snapshot(c), resync: true })
    }
    log.info({ live: rows.value.length, adopted: adopted.length }, 'channels resynchronised')
    for (const l of [...resyncListeners]) {
      try {
        l(startedAt)
      } catch (e) {
        log.error({ err: e }, 'resync listener failed')
      }
    }
    return ok(undefined)
  }

  let running: Promise<Result<void, string>> | undefined
  let queued: Promise<Result<void, string>> | undefined
  const resync = (): Promise<Result<void, string>> => {
    if (running === undefined) {
      running = runResync().finally(() => (running = undefined))
      return running
    }
    // One already runs: it may have read the channel list before the caller's reason to ask.
    queued ??= running.then(() => {
      queued = undefined
      return resync()
    })
    return queued
  }

  const unsubscribeConnected = pbx.onConnected(() => {
    void resync().then((r) => {
      if (!r.ok) log.warn({ reason: r.error }, 'channel resynchronisation failed')
    })
  })

  return {
    liveChannelCount: (domain) => live.get(domain.toLowerCase())?.size ?? 0,
    get: (uuid) => {
      const c = channels.get(uuid)
      return c === undefined ? undefined : snapshot(c)
    },
    liveChannels: (domain) =>
      [...channels.values()]
        .filter((c) => c.state !== 'hangup' && (domain === undefined || c.domain === domain.toLowerCase()))
        .map(snapshot),
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onResynced(listener) {
      resyncListeners.add(listener)
      return () => resyncListeners.delete(listener)
    },
    resync,
    close() {
      unsubscribeEvents()
      unsubscribeConnected()
      listeners.clear()
      resyncListeners.clear()
    },
  }
}
