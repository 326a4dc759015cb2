/**
 * call_group hunting (issue 5, docs/design.md "Origination semantics"): members in the group's
 * order, one member at a time, all of that member's registered terminals rung together for
 * member_answer_timeout, the whole hunt bounded by answer_timeout.
 *
 * - A member with no registered terminal is skipped (looked up at the start, and again just
 *   before the member's turn: a phone may have registered or gone since).
 * - A member who is busy, rejects, or fails in any way: the next member at once.
 * - A member's turn is cut to the time left of the hunt (rounded to whole seconds, as
 *   originate_timeout is); with less than half a second left the hunt ends.
 * - Each member's legs are reserved against the channel limit just before they ring (the first
 *   member's before the hunt is admitted); a member whose legs do not fit any more is skipped.
 * - The hunt ends with the answering member's leg, or with the cause of the last member tried.
 *
 * The engine supplies the operations; this module only decides the order and the timeouts.
 */
import type { Result } from '../util/result.js'
import type { AttemptOutcome } from './outcome.js'
import { refusal, type OriginationRefusal } from './refusal.js'

export interface HuntMember {
  readonly userId: string
  readonly userName: string
  /** Pre-assigned leg UUIDs of this member, one per terminal found at the start (the reply lists them). */
  readonly uuids: readonly string[]
  /** Contacts found at the start. */
  readonly contacts: readonly string[]
}

export interface HuntLeg {
  readonly uuid: string
  readonly contact: string
}

export interface HuntOps {
  /** The member's contacts now; undefined when they could not be read (the ones from the start are used). */
  lookup(member: HuntMember): Promise<readonly string[] | undefined>
  /** Checks and reserves channel slots for these legs (atomic). */
  reserve(uuids: readonly string[]): boolean
  /** Drops reservations of legs that will not be placed. */
  release(uuids: readonly string[]): void
  /** Places one member's legs; resolves once FreeSWITCH accepted the originate. */
  start(member: HuntMember, legs: readonly HuntLeg[], timeoutSec: number): Promise<Result<Promise<AttemptOutcome>, OriginationRefusal>>
  /** Seconds of FreeSWITCH time since the hunt began. */
  elapsedSec(): number
  /** True once the engine is closing: no further member is tried. */
  stopped(): boolean
}

export interface HuntTimes {
  readonly answerTimeoutSec: number
  readonly memberAnswerTimeoutSec: number
}

/**
 * The timeout of the next member's originate, or undefined when the hunt has no time left.
 * @internal Exported for tests: test/origination checks the per-member timeouts.
 */
export function memberTimeout(times: HuntTimes, elapsedSec: number): number | undefined {
  const left = times.answerTimeoutSec - elapsedSec
  // originate_timeout is whole seconds: round to the nearest, so the hunt overshoots by < 0.5 s.
  if (left < 0.5) return undefined
  return Math.max(1, Math.min(times.memberAnswerTimeoutSec, Math.round(left)))
}

/**
 * Runs the hunt. `accepted` is called exactly once, after the first member's originate was
 * accepted or refused (the API replies then); when it was refused the hunt ends there and the
 * returned outcome is not a result to report.
 * The first member's legs must already be reserved.
 */
export async function runHunt(
  members: readonly HuntMember[],
  times: HuntTimes,
  ops: HuntOps,
  accepted: (r: Result<void, OriginationRefusal>) => void,
): Promise<{ readonly reported: boolean; readonly outcome: AttemptOutcome }> {
  let lastCause: string | undefined
  let first = true
  for (const member of members) {
    if (!first && ops.stopped()) break
    let contacts = member.contacts
    if (!first) {
      const fresh = await ops.lookup(member)
      if (fresh !== undefined) contacts = fresh
    }
    const legs = contacts.slice(0, member.uuids.length).map((contact, i) => ({ uuid: member.uuids[i] ?? '', contact }))
    const timeoutSec = memberTimeout(times, ops.elapsedSec())
    if (first) {
      // Unused reservations of the first member (fewer contacts now) are dropped.
      ops.release(member.uuids.slice(legs.length))
    }
    if (legs.length === 0 || timeoutSec === undefined) {
      if (first) {
        // Cannot happen for a member chosen because it had contacts, unless answer_timeout < 1 s.
        ops.release(member.uuids)
        accepted({ ok: false, error: refusal('internal', 'the hunt had no member to ring') })
        return { reported: false, outcome: { answered: false, cause: 'NO_ANSWER' } }
      }
      if (timeoutSec === undefined) break
      continue
    }
    if (!first && !ops.reserve(legs.map((l) => l.uuid))) {
      lastCause ??= 'NORMAL_CIRCUIT_CONGESTION'
      continue
    }
    const started = await ops.start(member, legs, timeoutSec)
    if (first) {
      first = false
      accepted(started.ok ? { ok: true, value: undefined } : started)
      if (!started.ok) return { reported: false, outcome: { answered: false, cause: 'UNKNOWN' } }
    }
    if (!started.ok) {
      // FreeSWITCH went away in the middle of the hunt: the members not yet tried are not reachable.
      lastCause ??= 'NORMAL_TEMPORARY_FAILURE'
      break
    }
    const outcome = await started.value
    if (outcome.answered) return { reported: true, outcome }
    lastCause = outcome.cause
  }
  return { reported: true, outcome: { answered: false, cause: lastCause ?? 'NO_ANSWER' } }
}
