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
}

interface Doomed {
  readonly domain: string
  readonly requestId: string
  readonly uuid: string
}

export function createLegRecords(deps: LegRecordsDeps): LegRecords {
  const { pbx, channels, commandTimeoutMs } = deps
  const delayMs = deps.forgetDelayMs ?? 5000
  const timers = new Set<NodeJS.Timeout>()

  /** Its output (`-ERR no reply` for no record), undefined when it could not be run. */
  const send = async (cmd: ReturnType<typeof commands.hashSelect>): Promise<string | undefined> => {
    if (!cmd.ok || !pbx.isConnected()) return undefined
    const r = await pbx.api(cmd.value, commandTimeoutMs)
    return r.ok ? r.value : undefined
  }

  const later = (fn: () => void, ms: number): void => {
    const t = setTimeout(() => {
      timers.delete(t)
      fn()
    }, ms)
    t.unref()
    timers.add(t)
  }

  const drop = (d: Doomed): void => {
    const ch = channels.get(d.uuid)
    // Still up (an answered leg lives on), or its request not reported yet: look again later.
    if ((ch !== undefined && ch.state !== 'hangup') || deps.inFlight(d.requestId)) {
      later(() => drop(d), delayMs)
      return
    }
    if (!pbx.isConnected()) {
      later(() => drop(d), delayMs)
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
    if (change.kind === 'destroyed') later(() => drop({ domain, requestId, uuid: ch.uuid }), delayMs)
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
      for (const uuid of uuids) later(() => drop({ domain, requestId, uuid }), delayMs)
    },
    close() {
      unsubscribe()
      for (const t of timers) clearTimeout(t)
      timers.clear()
    },
  }
}
