/**
 * The daemon's side of the records FreeSWITCH keeps of our legs (pbx/leg-record.ts): the fate of
 * a leg that ended while the daemon was not listening (a crash, a restart, a lost ESL link) can
 * still be read, so that recovery reports the true outcome instead of a guess.
 *
 * - The records are written by FreeSWITCH itself: the originate gives each leg its
 *   `api_on_answer` and `api_hangup_hook` (pbx/commands.ts answerRecordVar, hangupRecordVar).
 * - read(): the records of a request's legs (`hash select`).
 * - Once a leg is destroyed and its request's result reported, the record is deleted (`hash delete`)
 *   after a delay that leaves the result time to reach the journal (a crash in between would
 *   lose nothing: the request would still be open and its leg record still there).
 */
import type { ChannelModel } from '../channels/index.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import * as commands from '../pbx/commands.js'
import { legRecordSlot, parseLegRecord, type LegRecord } from '../pbx/leg-record.js'
import type { PbxClient } from '../pbx/types.js'
import { systemClock, type Clock } from '../util/clock.js'
import type { LegState } from './leg-outcome.js'

/** A leg's record: what it says, `none` when FreeSWITCH holds none, `unread` when it could not be asked. */
export type LegRecordRead = LegRecord | { readonly kind: 'none' } | { readonly kind: 'unread' }

/** What a leg's record adds to what the channel events told of a leg that is not live. */
export function applyRecord(leg: LegState, rec: LegRecordRead | undefined): void {
  if (rec === undefined || leg.live) return
  if (rec.kind === 'answered') {
    leg.created = true
    leg.answered = true
    leg.cause = rec.cause ?? leg.cause
  } else if (rec.kind === 'failed') {
    leg.created = true
    leg.cause = rec.cause
  }
}

export interface LegRecords {
  /** The records of these legs of the request, by uuid. */
  read(domain: string, requestId: string, uuids: readonly string[]): Promise<Map<string, LegRecordRead>>
  /** The request's result is reported: its legs' records go once the legs are gone. */
  forget(domain: string, requestId: string, uuids: readonly string[]): void
  close(): void
}

export interface LegRecordsDeps {
  readonly pbx: PbxClient
  readonly channels: ChannelModel
  readonly commandTimeoutMs: number
  /** The request is still in flight (its result not reported yet): its records stay. */
  readonly inFlight: (requestId: string) => boolean
  /** How long after the result a record is kept. Default 5000 ms. */
  readonly forgetDelayMs?: number
  /** Default: the system clock. */
  readonly clock?: Clock
}

interface Doomed {
  readonly domain: string
  readonly requestId: string
  readonly uuid: string
}

/**
 * A record falling due this much early is dropped with the ones due now: one timer wake serves a
 * burst of calls (a few hundred a second: a timer each was a wake each), and a record kept 5 s
 * is as good as one kept 4.75 s.
 */
const DUE_TOGETHER_MS = 250

export function createLegRecords(deps: LegRecordsDeps): LegRecords {
  const { pbx, channels, commandTimeoutMs } = deps
  const delayMs = deps.forgetDelayMs ?? 5000
  /** Records to drop, in the order they fall due (each waits delayMs from when it was queued). */
  const due: Array<{ readonly at: number; readonly doomed: Doomed }> = []
  const clock = deps.clock ?? systemClock
  /** Cancels the armed wake, if any. */
  let timer: (() => void) | undefined

  /** Its output (`-ERR no reply` for no record), undefined when it could not be run. */
  const send = async (cmd: ReturnType<typeof commands.hashSelect>): Promise<string | undefined> => {
    if (!cmd.ok || !pbx.isConnected()) return undefined
    const r = await pbx.api(cmd.value, commandTimeoutMs)
    return r.ok ? r.value : undefined
  }

  /** Looks at the record again in delayMs (one timer for all: see DUE_TOGETHER_MS). */
  const later = (doomed: Doomed): void => {
    due.push({ at: clock.now() + delayMs, doomed })
    arm()
  }

  const arm = (): void => {
    const next = due[0]
    if (timer !== undefined || next === undefined) return
    timer = clock.after(Math.max(0, next.at - clock.now()), dropDue)
  }

  const dropDue = (): void => {
    timer = undefined
    const until = clock.now() + DUE_TOGETHER_MS
    // Only the records due when this wake began: drop() may queue one again, at the tail, and
    // with a delay shorter than DUE_TOGETHER_MS it would fall inside this window and be looked
    // at again at once, over and over, holding the event loop until the window passed.
    let ready = 0
    while (ready < due.length && (due[ready] as (typeof due)[number]).at <= until) ready += 1
    for (const next of due.splice(0, ready)) drop(next.doomed)
    arm()
  }

  const drop = (d: Doomed): void => {
    const ch = channels.get(d.uuid)
    // Still up (an answered leg lives on), its request not reported yet, or no link to delete it
    // over: look again later.
    if ((ch !== undefined && ch.state !== 'hangup') || deps.inFlight(d.requestId) || !pbx.isConnected()) {
      later(d)
      return
    }
    void send(commands.hashDelete(legRecordSlot(d.domain, d.requestId, d.uuid)))
  }

  const unsubscribe = channels.onChange((change) => {
    const ch = change.channel
    const requestId = ch.requestId
    if (ch.role !== 'originator' || requestId === undefined || ch.domain === undefined) return
    const domain = ch.vars[CHANNEL_VARS.domain] ?? ch.domain
    // Its hook has run (CS_HANGUP comes before CHANNEL_DESTROY): the record goes once the result is out.
    if (change.kind === 'destroyed') later({ domain, requestId, uuid: ch.uuid })
  })

  return {
    async read(domain, requestId, uuids) {
      const out = new Map<string, LegRecordRead>()
      await Promise.all(
        uuids.map(async (uuid) => {
          const reply = await send(commands.hashSelect(legRecordSlot(domain, requestId, uuid)))
          if (reply === undefined) out.set(uuid, { kind: 'unread' })
          else out.set(uuid, parseLegRecord(reply) ?? { kind: 'none' })
        }),
      )
      return out
    },
    forget(domain, requestId, uuids) {
      for (const uuid of uuids) later({ domain, requestId, uuid })
    },
    close() {
      unsubscribe()
      timer?.()
      timer = undefined
      due.length = 0
    },
  }
}
