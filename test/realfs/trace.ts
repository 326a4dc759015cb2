/**
 * What the lane compares between the simulator and the real FreeSWITCH, once normalised: UUIDs
 * become the names of their legs (direction + SIP user or number, e.g. `o:alice`, `o:0399990000`,
 * `i:alice`), times, sequence numbers, ports and ids are dropped, and each leg's channel events
 * become one line. Legs with the same name are sorted, so the order in which two terminals of one
 * user were created does not matter; the order of events on one leg does.
 */
import type { RecordedEvent } from './esl-tap.js'

export interface Trace {
  /** Each API reply in order: status and body with leg names. */
  replies: unknown[]
  callbacks: unknown[]
  /** CTI messages of the scenario's subscriber, consecutive repeats folded. */
  cti: unknown[]
  /** One line per leg, sorted. */
  legs: string[]
  /** Values a scenario reads itself (e.g. what the IVR's application server received). */
  notes: Record<string, unknown>
  /** The status events of the scenario's requests, one line per leg (statusLines). */
  status: string[]
  /** What does not hold of them (statusProblems): empty on both switches. */
  statusProblems: string[]
}

/** Events that make up a leg's line; the rest (EXECUTE, HANGUP_COMPLETE, DESTROY) repeat what these say. */
const SHOWN: Record<string, (h: Readonly<Record<string, string>>) => string> = {
  CHANNEL_CREATE: () => 'CREATE',
  CHANNEL_PROGRESS: () => 'PROGRESS',
  CHANNEL_PROGRESS_MEDIA: () => 'PROGRESS_MEDIA',
  CHANNEL_ANSWER: () => 'ANSWER',
  CHANNEL_BRIDGE: () => 'BRIDGE',
  CHANNEL_UNBRIDGE: () => 'UNBRIDGE',
  CHANNEL_PARK: () => 'PARK',
  CHANNEL_HANGUP: (h) => `HANGUP(${h['Hangup-Cause'] ?? '?'})`,
  DTMF: (h) => `DTMF(${h['DTMF-Digit'] ?? '?'})`,
}

/** Channel variables whose value (or absence) is part of a leg's line: the daemon's marks and the auto-answer header. */
const VARS = ['cod_role', 'cod_operation', 'cod_group_id', 'cod_dest_kind', 'sip_h_Call-Info']

/** `sofia/internal/alice@127.0.0.3:5070` or `sofia/internal/sip:alice@...` → `alice`; `sofia/internal/0399990000` → the number. */
export function legName(h: Readonly<Record<string, string>>): string {
  const name = h['Channel-Name'] ?? ''
  const last = name.slice(name.lastIndexOf('/') + 1).replace(/^sips?:/, '')
  const user = last.split('@')[0] ?? last
  return `${h['Call-Direction'] === 'inbound' ? 'i' : 'o'}:${user}`
}

export function legNames(events: readonly RecordedEvent[]): Map<string, string> {
  const names = new Map<string, string>()
  for (const e of events) {
    const uuid = e.headers['Unique-ID']
    if (uuid !== undefined && !names.has(uuid) && e.headers['Channel-Name'] !== undefined) names.set(uuid, legName(e.headers))
  }
  return names
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Replaces UUIDs by leg names (`-` for a UUID no event named: a leg never created) and drops volatile keys. */
export function scrub(v: unknown, names: ReadonlyMap<string, string>, drop: ReadonlySet<string> = new Set()): unknown {
  if (typeof v === 'string') return UUID_RE.test(v) ? (names.get(v) ?? '-') : v
  if (Array.isArray(v)) return v.map((x) => scrub(x, names, drop))
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) if (!drop.has(k)) out[k] = scrub(x, names, drop)
    return out
  }
  return v
}

export function legLines(events: readonly RecordedEvent[]): string[] {
  const byUuid = new Map<string, { name: string; seq: string[]; vars: Map<string, string> }>()
  for (const e of events) {
    const uuid = e.headers['Unique-ID']
    const show = SHOWN[e.name]
    if (uuid === undefined) continue
    let leg = byUuid.get(uuid)
    if (leg === undefined) {
      if (e.name !== 'CHANNEL_CREATE') continue // a leg of an earlier scenario
      leg = { name: legName(e.headers), seq: [], vars: new Map() }
      byUuid.set(uuid, leg)
    }
    // The caller id a destination leg presents (its phone's From): issue 13 D2.
    if (e.name === 'CHANNEL_CREATE' && e.headers['variable_cod_role'] === 'destination') {
      leg.vars.set('cid', `${e.headers['Caller-Caller-ID-Name'] ?? ''}/${e.headers['Caller-Caller-ID-Number'] ?? ''}`)
    }
    for (const k of VARS) {
      const v = e.headers[`variable_${k}`]
      if (v !== undefined && !leg.vars.has(k)) leg.vars.set(k, k === 'sip_h_Call-Info' ? 'auto-answer' : v)
    }
    if (show === undefined) continue
    const s = show(e.headers)
    if (leg.seq[leg.seq.length - 1] !== s) leg.seq.push(s)
  }
  return [...byUuid.values()]
    .map((l) => `${l.name} [${[...l.vars].map(([k, v]) => `${k}=${v}`).sort().join(' ')}] ${l.seq.join(',')}`)
    .sort()
}

/** A CTI line as ctiLines writes it. */
interface CtiLine {
  readonly event?: string
  readonly uuid?: string
  readonly state?: string
  readonly other?: string | null
}

/**
 * A bridge's end reaches the daemon from two session threads: the CHANNEL_UNBRIDGE of the leg
 * that ran the bridge and the CHANNEL_HANGUP of its partner come in either order (seen both ways
 * on a real 1.10.12, the "CTI: bob's panel" scenario: one run in seven). So once a leg has hung
 * up still bridged, its partner's next line is either its own hangup, still bridged, or
 * "answered" with no other leg (the unbridge first): that one line is left out of the comparison.
 * Every other line, and the order of all the rest, still counts.
 */
function withoutTeardownRace(lines: readonly string[]): string[] {
  const parsed = lines.map((l) => JSON.parse(l) as CtiLine)
  const racy = new Set<number>()
  parsed.forEach((x, i) => {
    if (x.event !== 'updated' || x.state !== 'hangup' || typeof x.other !== 'string') return
    const j = parsed.findIndex((y, k) => k > i && y.uuid === x.other)
    const y = parsed[j]
    if (y === undefined || y.event !== 'updated') return
    if ((y.state === 'hangup' && y.other === x.uuid) || (y.state === 'answered' && y.other === null)) racy.add(j)
  })
  return lines.filter((_, i) => !racy.has(i))
}

/**
 * CTI messages without sequence numbers and times, consecutive repeats folded, simultaneous
 * removals sorted, the one line of a bridge's teardown that races left out (withoutTeardownRace).
 */
export function ctiLines(messages: readonly unknown[], names: ReadonlyMap<string, string>): unknown[] {
  const out: string[] = []
  for (const m of messages) {
    const x = m as { type?: string; event?: string; channel?: Record<string, unknown>; channels?: unknown[] }
    const c = x.channel
    const line = JSON.stringify(
      scrub(
        c === undefined
          ? { type: x.type, channels: x.channels?.length }
          : { type: x.type, event: x.event, uuid: c['uuid'], state: c['state'], user_id: c['user_id'], other: c['other_uuid'], end_user: c['end_user'] },
        names,
      ),
    )
    if (out[out.length - 1] !== line) out.push(line)
  }
  // Channels destroyed together (a bridge's two legs) are removed in an order FreeSWITCH does not
  // fix: their CHANNEL_DESTROY events come from two session threads (seen both ways on a real
  // 1.10.12). A run of consecutive removals is compared as a set.
  for (let i = 0; i < out.length; ) {
    let j = i
    while (j < out.length && (out[j] ?? '').includes('"event":"removed"')) j++
    if (j > i + 1) out.splice(i, j - i, ...out.slice(i, j).sort())
    i = Math.max(j, i + 1)
  }
  return withoutTeardownRace(out)
}

/** A status event as the lanes' receiver got it (docs/events.md). */
export interface StatusEventBody {
  readonly event: string
  readonly request_id: string
  readonly uuid: string
  readonly leg: string
  readonly sequence: number
  readonly billsec?: number | null
  readonly duration_s?: number | null
  readonly hangup_cause?: string | null
  readonly hangup_by?: string | null
  readonly peer_uuid?: string
}

/** A call's order of a leg's events (`bridged` only on the originating leg that answered). */
const STATUS_ORDER = ['initiated', 'ringing', 'answered', 'bridged', 'completed']

/** The request of each event, numbered in the order the requests' first events came: `r1`, `r2`... */
function requestNumbers(events: readonly StatusEventBody[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const e of events) if (!out.has(e.request_id)) out.set(e.request_id, `r${out.size + 1}`)
  return out
}

/**
 * The status events of a scenario, one line per leg, sorted: `r1 origin o:alice: initiated,
 * ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)`. Legs named as legLines
 * names them; the order of events of different legs is FreeSWITCH's and is not part of the line.
 */
export function statusLines(events: readonly StatusEventBody[], names: ReadonlyMap<string, string>): string[] {
  const requests = requestNumbers(events)
  // By UUID: two terminals of one user have the same name and a line each.
  const legs = new Map<string, string[]>()
  const legName = new Map<string, string>()
  for (const e of events) {
    const key = e.uuid
    legName.set(key, `${requests.get(e.request_id) ?? '?'} ${e.leg} ${names.get(e.uuid) ?? '-'}`)
    const said =
      e.event === 'completed'
        ? `completed(${e.hangup_cause ?? '?'} by ${e.hangup_by ?? '?'})`
        : e.event === 'bridged'
          ? `bridged(${names.get(e.peer_uuid ?? '') ?? '-'})`
          : e.event
    legs.set(key, [...(legs.get(key) ?? []), said])
  }
  return [...legs].map(([uuid, said]) => `${legName.get(uuid) ?? '?'}: ${said.join(',')}`).sort()
}

/**
 * What must hold of any call's status events (issue 29 item 6), whatever the scenario: per request
 * numbered 1..n in the order they arrived; per leg each event once, in a call's order, ending with
 * `completed`; `bridged` once per request; and each `completed`'s billsec and duration_s those of
 * the switch's own CHANNEL_HANGUP_COMPLETE for that leg (within 1 s). Returns what does not hold.
 */
export function statusProblems(events: readonly StatusEventBody[], switchEvents: readonly RecordedEvent[]): string[] {
  const problems: string[] = []
  const byRequest = new Map<string, StatusEventBody[]>()
  for (const e of events) byRequest.set(e.request_id, [...(byRequest.get(e.request_id) ?? []), e])
  for (const [requestId, mine] of byRequest) {
    const seqs = mine.map((e) => e.sequence)
    if (seqs.some((s, i) => s !== i + 1)) problems.push(`${requestId}: sequences ${seqs.join(',')} are not 1..${seqs.length} in order`)
    if (mine.filter((e) => e.event === 'bridged').length > 1) problems.push(`${requestId}: bridged more than once`)
    const legs = new Map<string, string[]>()
    for (const e of mine) legs.set(e.uuid, [...(legs.get(e.uuid) ?? []), e.event])
    for (const [uuid, said] of legs) {
      const order = said.map((x) => STATUS_ORDER.indexOf(x))
      if (order.some((o, i) => o < 0 || (i > 0 && o <= (order[i - 1] ?? -1)))) problems.push(`${uuid}: ${said.join(',')} is not each event once in a call's order`)
      if (said[said.length - 1] !== 'completed') problems.push(`${uuid}: ${said.join(',')} does not end with completed`)
    }
  }
  for (const e of events) {
    if (e.event !== 'completed') continue
    const complete = switchEvents.find((x) => x.name === 'CHANNEL_HANGUP_COMPLETE' && x.headers['Unique-ID'] === e.uuid)
    const billsec = Number(complete?.headers['variable_billsec'])
    const duration = Number(complete?.headers['variable_duration'])
    if (!Number.isFinite(billsec) || !Number.isFinite(duration)) {
      problems.push(`${e.uuid}: the switch told no billsec and duration`)
      continue
    }
    if (Math.abs((e.billsec ?? -9) - billsec) > 1) problems.push(`${e.uuid}: billsec ${e.billsec} against the switch's ${billsec}`)
    if (Math.abs((e.duration_s ?? -9) - duration) > 1) problems.push(`${e.uuid}: duration_s ${e.duration_s} against the switch's ${duration}`)
  }
  return problems
}
