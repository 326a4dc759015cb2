/**
 * Applies a re-read of FreeSWITCH's live channels (`show channels as json`,
 * test/fixtures/freeswitch/esl/03-show-channels-live-call.txt, plus our `cod_*` variables read back
 * with `uuid_getvar`) to the table. Events sent while the socket was down are lost, so after every
 * (re)connection:
 *
 * - channels missing from the list ended while we were not listening: they are removed;
 * - a channel we still think calling or ringing may have been answered meanwhile: the row says
 *   so (later states, bridged or ivr, cannot be told apart in these rows, so ours stay);
 * - channels we never heard of are added, with what the row and their variables tell.
 *
 * Events that arrived after the re-read began are newer than its rows: the channels they
 * touched (and those they destroyed) keep what the events said.
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { ChannelRow } from '../pbx/replies.js'
import { knownDomain, nonEmpty, userPart } from './headers.js'
import { newChannel, type MutableChannel } from './record.js'
import type { ChannelTable } from './table.js'
import type { ChangeKind, ChannelChange, ChannelDirectory, ChannelState } from './types.js'

/** Our variables read back from a channel we never heard of (undefined: not set on it). */
export interface ReadBackVars {
  readonly domain: string | undefined
  readonly requestId: string | undefined
  readonly role: string | undefined
}

export interface ResyncRow {
  readonly row: ChannelRow
  /** Read only for channels unknown when the list arrived. */
  readonly vars?: ReadBackVars
}

function stateOfRow(row: ChannelRow): ChannelState {
  const callstate = nonEmpty(row.callstate)
  if (callstate === 'HANGUP') return 'hangup'
  if (callstate === 'ACTIVE' || callstate === 'HELD') return nonEmpty(row.application) === 'park' ? 'park' : 'answered'
  if (callstate === 'RINGING' || callstate === 'EARLY') return 'ringing'
  return 'calling'
}

const isAnswered = (state: ChannelState): boolean => state === 'answered' || state === 'park'

/**
 * @param sinceSeq the table's event counter when the re-read began
 * @param at epoch ms: the time given to what the re-read changes
 */
export function reconcile(
  table: ChannelTable,
  rows: readonly ResyncRow[],
  sinceSeq: number,
  at: number,
  directory: ChannelDirectory | undefined,
): ChannelChange[] {
  const changes: ChannelChange[] = []
  const listed = new Set(rows.map((r) => r.row.uuid))

  // Gone while we were not listening.
  for (const ch of [...table.all()]) {
    if (listed.has(ch.uuid) || ch.seenSeq > sinceSeq) continue
    if (ch.state !== 'hangup') {
      ch.hangupAt = at
      table.setState(ch, 'hangup', at)
    }
    table.remove(ch)
    changes.push({ kind: 'destroyed', channel: ch, resync: true })
  }

  // Answered (or rang) while we were not listening.
  for (const { row } of rows) {
    const ch = table.get(row.uuid)
    if (ch === undefined || ch.seenSeq > sinceSeq) continue
    const rowState = stateOfRow(row)
    let kind: ChangeKind | undefined
    if ((ch.state === 'calling' || ch.state === 'ringing') && rowState !== ch.state && rowState !== 'calling') {
      if (isAnswered(rowState)) ch.answerAt ??= at
      table.setState(ch, rowState, at)
      kind = rowState === 'hangup' ? 'hangup' : isAnswered(rowState) ? 'answered' : 'progress'
    }
    if (isAnswered(rowState) && !ch.answered && ch.state !== 'hangup') {
      ch.answered = true
      kind = 'answered'
    }
    if (kind !== undefined) changes.push({ kind, channel: ch, resync: true })
  }

  // Created while we were not listening.
  for (const { row, vars } of rows) {
    if (table.get(row.uuid) !== undefined || table.wasDestroyed(row.uuid)) continue
    changes.push({ kind: 'created', channel: adopt(table, row, vars, at, directory), resync: true })
  }
  return changes
}

function adopt(table: ChannelTable, row: ChannelRow, vars: ReadBackVars | undefined, at: number, directory: ChannelDirectory | undefined): MutableChannel {
  const created = nonEmpty(row.created_epoch)
  const ch = newChannel(row.uuid, at, created !== undefined && /^[0-9]{1,15}$/.test(created) ? Number(created) * 1000 : at, table.lastSeq)
  const direction = row.direction
  ch.direction = direction === 'inbound' || direction === 'outbound' ? direction : undefined
  ch.callingName = nonEmpty(row.cid_name)
  ch.callingNumber = nonEmpty(row.cid_num)
  ch.calledNumber = nonEmpty(row.dest)
  ch.state = stateOfRow(row)
  ch.answered = isAnswered(ch.state)
  if (vars?.domain !== undefined) ch.vars[CHANNEL_VARS.domain] = vars.domain
  if (vars?.requestId !== undefined) ch.vars[CHANNEL_VARS.requestId] = vars.requestId
  if (vars?.role !== undefined) ch.vars[CHANNEL_VARS.role] = vars.role
  ch.role = vars?.role
  table.insert(ch)
  if (vars?.requestId !== undefined) table.setRequest(ch, vars.requestId)
  const presence = nonEmpty(row.presence_id)
  const domain = vars?.domain?.toLowerCase() ?? knownDomain(directory, presence) ?? knownDomain(directory, nonEmpty(row.context))
  if (domain !== undefined) {
    table.setDomain(ch, domain)
    const sipName = userPart(presence)
    const user = sipName === undefined ? undefined : directory?.domain(domain)?.userBySipName(sipName)
    if (user !== undefined) table.setUser(ch, user.id)
  }
  return ch
}
