/**
 * What the nodes say to each other about CTI, on Redis (docs/cluster.md "One CTI view"): a
 * channel change (also the value kept in the node's channel hash), a node's "re-read me" (reset),
 * and a forwarded command with its reply. Parsed defensively: a message that is not one of these
 * is dropped, never trusted into the view.
 *
 * A channel's view travels as JSON inside the message and is re-serialised on arrival:
 * JSON.stringify of what JSON.parse read gives back the same bytes (same keys, same order), so a
 * subscriber gets exactly what a subscriber of the owning node gets.
 */
import type { CommandSource, Credential, RemoteChannel, SharedChannel } from '../cti/peers.js'

/** A channel change from `node`'s run `run`, its `seq`-th message (gaps tell a message was lost). */
export interface ChannelMessage {
  readonly kind: 'channel'
  readonly run: string
  readonly seq: number
  readonly removed: boolean
  readonly channel: RemoteChannel
}

/** `node` rewrote its whole channel hash (start, reconnection): re-read it. */
export interface ResetMessage {
  readonly kind: 'reset'
  readonly node: string
  readonly run: string
  readonly seq: number
}

export type ViewMessage = ChannelMessage | ResetMessage

export interface CommandMessage {
  /** The node that waits for the reply. */
  readonly from: string
  readonly id: string
  readonly source: CommandSource
  /** The client's command frame (JSON text). */
  readonly frame: string
}

export interface ReplyMessage {
  readonly id: string
  readonly frame: string
}

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStr = (v: unknown): v is string => typeof v === 'string'
const isStrs = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr)
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

function parse(text: string): Obj | undefined {
  try {
    const v: unknown = JSON.parse(text)
    return isObj(v) ? v : undefined
  } catch {
    return undefined
  }
}

/** A channel change (also a field of the node's hash); the view is spliced in, not re-serialised. */
export function channelMessage(node: string, run: string, seq: number, ch: SharedChannel, removed: boolean): string {
  const head = JSON.stringify({ node, run, seq, uuid: ch.uuid, domain: ch.domain, parties: ch.parties, user_id: ch.userId ?? null, removed })
  return `${head.slice(0, -1)},"view":${ch.view}}`
}

export const resetMessage = (node: string, run: string, seq: number): string => JSON.stringify({ node, run, seq, reset: true })

export function parseViewMessage(text: string): ViewMessage | undefined {
  const m = parse(text)
  if (m === undefined || !isStr(m.node) || !isStr(m.run) || !isSeq(m.seq)) return undefined
  if (m.reset === true) return { kind: 'reset', node: m.node, run: m.run, seq: m.seq }
  if (!isStr(m.uuid) || !isStr(m.domain) || !isStrs(m.parties) || !isObj(m.view) || typeof m.removed !== 'boolean') return undefined
  if (m.user_id !== null && !isStr(m.user_id)) return undefined
  const channel: RemoteChannel = {
    node: m.node,
    uuid: m.uuid,
    domain: m.domain,
    parties: m.parties,
    userId: m.user_id ?? undefined,
    view: JSON.stringify(m.view),
  }
  return { kind: 'channel', run: m.run, seq: m.seq, removed: m.removed, channel }
}

export const commandMessage = (c: CommandMessage): string => JSON.stringify(c)

const CREDENTIALS: readonly Credential[] = ['token', 'ticket']

export function parseCommandMessage(text: string): CommandMessage | undefined {
  const m = parse(text)
  if (m === undefined || !isStr(m.from) || !isStr(m.id) || !isStr(m.frame) || !isObj(m.source)) return undefined
  const s = m.source
  const credential = CREDENTIALS.find((c) => c === s.credential)
  if (!isStr(s.domain) || credential === undefined || typeof s.readOnly !== 'boolean') return undefined
  if (s.userId !== undefined && !isStr(s.userId)) return undefined
  return { from: m.from, id: m.id, frame: m.frame, source: { domain: s.domain, userId: s.userId, credential, readOnly: s.readOnly } }
}

export const replyMessage = (r: ReplyMessage): string => JSON.stringify(r)

export function parseReplyMessage(text: string): ReplyMessage | undefined {
  const m = parse(text)
  return m !== undefined && isStr(m.id) && isStr(m.frame) ? { id: m.id, frame: m.frame } : undefined
}
