/**
 * The domain's last finished calls, for the live calls page (docs/ui.md "Finished calls"): kept
 * in memory, at most `perDomain` (50) per domain, newest last, and filled from the one channel
 * model's changes, never from a model of its own: a call is the set of legs that belong
 * together, and it is finished when the model has destroyed its last leg.
 *
 * Which legs belong together: the legs of one API request (`cod_request_id`, handed down to the
 * legs its dialplan creates), and legs linked by the model (`otherUuid`, `peers`: a bridge, a leg
 * a bridge creates). Two groups that get linked (a transfer bridging two calls) become one.
 *
 * While a call runs, only a small summary of each leg is held (what the finished call needs), in
 * maps bounded by the live channels; the summaries go when the call is finished. A hunt's tries
 * that do not overlap (the next leg created after the previous one was destroyed) show as
 * separate calls: the model cannot tell they belong together, and this module does not guess.
 */
import { Ring } from '../util/ring.js'
import type { ChannelChange, ChannelRecord } from './types.js'

/** How a finished call went, from its legs (docs/api.md "Finished calls"). */
export type CallOutcome = 'connected' | 'answered' | 'busy' | 'no_answer' | 'cancelled' | 'failed'

export interface FinishedCall {
  /** The first leg's UUID (the call's first offer). */
  readonly id: string
  readonly domain: string
  readonly requestId: string | undefined
  readonly operation: string | undefined
  /** Who took part: each leg's user or number (as the page's "User or number"), in order of offer, each once. */
  readonly parties: readonly string[]
  readonly outcome: CallOutcome
  /** Epoch ms: the first offer, the first answer, the last hangup. */
  readonly startedAt: number
  readonly answeredAt: number | undefined
  readonly endedAt: number
  /** Whole seconds from the first offer to the last hangup (rounded down, as FreeSWITCH's duration). */
  readonly durationS: number
  /** Whole seconds from the first answer to the last hangup; 0 when nobody answered. */
  readonly talkS: number
  /** The cause of the leg whose hangup ended the call (see causeOf), or undefined when none was told. */
  readonly hangupCause: string | undefined
  readonly legs: number
}

export interface CallHistory {
  /** The domain's finished calls, newest first (at most perDomain). */
  finished(domain: string): FinishedCall[]
  /** Calls under way (legs seen, not all destroyed): what this module holds besides the rings. */
  readonly openCalls: number
  /** Stops following the model. */
  close(): void
}

export interface CallHistoryDeps {
  readonly channels: { onChange(listener: (change: ChannelChange) => void): () => void }
  /** Finished calls kept per domain. Default 50. */
  readonly perDomain?: number
}

const DEFAULT_PER_DOMAIN = 50

/** What a finished call needs of one leg, copied at each change (the model forgets a destroyed record). */
interface LegSummary {
  readonly uuid: string
  readonly party: string | undefined
  readonly offerAt: number
  readonly answerAt: number | undefined
  readonly hangupAt: number | undefined
  readonly hangupCause: string | undefined
  readonly bridged: boolean
}

interface OpenCall {
  readonly domain: string
  readonly legs: Map<string, LegSummary>
  readonly live: Set<string>
  readonly requestIds: Set<string>
  requestId: string | undefined
  operation: string | undefined
}

/** Causes that say a leg lost to another of its call, not how the call went. */
const LOSING_CAUSES = new Set(['LOSE_RACE', 'ORIGINATOR_CANCEL', 'PICKED_OFF'])
const BUSY_CAUSES = new Set(['USER_BUSY'])
const NO_ANSWER_CAUSES = new Set(['NO_ANSWER', 'NO_USER_RESPONSE', 'ALLOTTED_TIMEOUT', 'RECOVERY_ON_TIMER_EXPIRE'])

/** The leg's user or number, as the page names a leg: what it calls (outbound) or who calls (inbound). */
function partyOf(ch: ChannelRecord): string | undefined {
  const order = ch.direction === 'inbound' ? [ch.callingNumber, ch.callingName, ch.calledNumber] : [ch.calledNumber, ch.callingNumber]
  return order.find((v) => v !== undefined && v !== '')
}

function summaryOf(ch: ChannelRecord, was: LegSummary | undefined): LegSummary {
  return {
    uuid: ch.uuid,
    party: partyOf(ch),
    offerAt: ch.offerAt,
    answerAt: ch.answerAt,
    hangupAt: ch.hangupAt,
    hangupCause: ch.hangupCause,
    bridged: (was?.bridged ?? false) || ch.state === 'bridged',
  }
}

/**
 * The cause that says how the call ended: the first hangup's, leaving out legs that only lost to
 * another leg of the call (LOSE_RACE, ORIGINATOR_CANCEL) unless nothing else was told.
 */
function causeOf(legs: readonly LegSummary[]): string | undefined {
  const byHangup = legs.filter((l) => l.hangupCause !== undefined).sort((a, b) => (a.hangupAt ?? Infinity) - (b.hangupAt ?? Infinity))
  return (byHangup.find((l) => !LOSING_CAUSES.has(l.hangupCause ?? '')) ?? byHangup[0])?.hangupCause
}

function outcomeOf(legs: readonly LegSummary[], cause: string | undefined): CallOutcome {
  if (legs.some((l) => l.bridged)) return 'connected'
  if (legs.some((l) => l.answerAt !== undefined)) return 'answered'
  if (cause === undefined) return 'failed'
  if (BUSY_CAUSES.has(cause)) return 'busy'
  if (NO_ANSWER_CAUSES.has(cause)) return 'no_answer'
  if (LOSING_CAUSES.has(cause)) return 'cancelled'
  return 'failed'
}

/** The finished call a set of legs makes. */
function finishedCallOf(call: Pick<OpenCall, 'domain' | 'requestId' | 'operation'>, legs: readonly LegSummary[], endedAtFallback: number): FinishedCall {
  const ordered = [...legs].sort((a, b) => a.offerAt - b.offerAt || (a.uuid < b.uuid ? -1 : 1))
  const first = ordered[0]
  const startedAt = first?.offerAt ?? endedAtFallback
  const answers = ordered.map((l) => l.answerAt).filter((a): a is number => a !== undefined)
  const answeredAt = answers.length > 0 ? Math.min(...answers) : undefined
  const hangups = ordered.map((l) => l.hangupAt).filter((h): h is number => h !== undefined)
  const endedAt = hangups.length > 0 ? Math.max(...hangups) : endedAtFallback
  const cause = causeOf(ordered)
  const parties: string[] = []
  for (const l of ordered) if (l.party !== undefined && !parties.includes(l.party)) parties.push(l.party)
  return {
    id: first?.uuid ?? '',
    domain: call.domain,
    requestId: call.requestId,
    operation: call.operation,
    parties,
    outcome: outcomeOf(ordered, cause),
    startedAt,
    answeredAt,
    endedAt,
    durationS: Math.max(0, Math.floor((endedAt - startedAt) / 1000)),
    talkS: answeredAt === undefined ? 0 : Math.max(0, Math.floor((endedAt - answeredAt) / 1000)),
    hangupCause: cause,
    legs: ordered.length,
  }
}

export function createCallHistory(deps: CallHistoryDeps): CallHistory {
  const perDomain = deps.perDomain ?? DEFAULT_PER_DOMAIN
  const rings = new Map<string, Ring<FinishedCall>>()
  /** The open call of each leg seen, and of each request id. */
  const callOfLeg = new Map<string, OpenCall>()
  const callOfRequest = new Map<string, OpenCall>()

  /** Moves everything of `from` into `into` (two groups turned out to be one call). */
  const merge = (into: OpenCall, from: OpenCall): void => {
    for (const [uuid, leg] of from.legs) {
      into.legs.set(uuid, leg)
      callOfLeg.set(uuid, into)
    }
    for (const uuid of from.live) into.live.add(uuid)
    for (const id of from.requestIds) {
      into.requestIds.add(id)
      callOfRequest.set(id, into)
    }
    into.requestId ??= from.requestId
    into.operation ??= from.operation
  }

  /** The open call this channel belongs to (made or merged as needed). */
  const callOf = (ch: ChannelRecord, domain: string): OpenCall => {
    const linked = [ch.uuid, ch.otherUuid, ...ch.peers].map((u) => (u === undefined ? undefined : callOfLeg.get(u)))
    linked.push(ch.requestId === undefined ? undefined : callOfRequest.get(ch.requestId))
    let call: OpenCall | undefined
    for (const c of linked) {
      if (c === undefined || c === call || c.domain !== domain) continue
      if (call === undefined) call = c
      else {
        const [big, small] = call.legs.size >= c.legs.size ? [call, c] : [c, call]
        merge(big, small)
        call = big
      }
    }
    call ??= { domain, legs: new Map(), live: new Set(), requestIds: new Set(), requestId: undefined, operation: undefined }
    if (ch.requestId !== undefined && !call.requestIds.has(ch.requestId)) {
      call.requestIds.add(ch.requestId)
      callOfRequest.set(ch.requestId, call)
    }
    call.requestId ??= ch.requestId
    call.operation ??= ch.operation
    return call
  }

  const finish = (call: OpenCall, endedAtFallback: number): void => {
    for (const uuid of call.legs.keys()) callOfLeg.delete(uuid)
    for (const id of call.requestIds) callOfRequest.delete(id)
    let ring = rings.get(call.domain)
    if (ring === undefined) {
      ring = new Ring(perDomain)
      rings.set(call.domain, ring)
    }
    ring.push(finishedCallOf(call, [...call.legs.values()], endedAtFallback))
  }

  const unsubscribe = deps.channels.onChange((change) => {
    const ch = change.channel
    if (ch.domain === undefined) return
    const call = callOf(ch, ch.domain)
    call.legs.set(ch.uuid, summaryOf(ch, call.legs.get(ch.uuid)))
    callOfLeg.set(ch.uuid, call)
    if (change.kind === 'destroyed') {
      call.live.delete(ch.uuid)
      if (call.live.size === 0) finish(call, ch.hangupAt ?? ch.stateAt)
    } else call.live.add(ch.uuid)
  })

  return {
    finished: (domain) => (rings.get(domain.toLowerCase())?.toArray() ?? []).reverse(),
    get openCalls() {
      return new Set(callOfLeg.values()).size
    },
    close: unsubscribe,
  }
}
