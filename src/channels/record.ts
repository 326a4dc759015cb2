/**
 * The writable form of a channel record, and its one constructor. Every record is built here
 * with every field present, so all records share one shape (V8 keeps them compact and their
 * field reads fast). Only the model's own modules see the writable form.
 */
import type { ChannelRecord } from './types.js'

export type MutableChannel = { -readonly [K in keyof ChannelRecord]: ChannelRecord[K] } & {
  vars: Record<string, string>
}

/** Shared by every record that has no parties or peers yet: arrays are replaced, never mutated. */
const NONE: readonly string[] = Object.freeze([])

export function newChannel(uuid: string, at: number, offerAt: number, seq: number): MutableChannel {
  return {
    uuid,
    domain: undefined,
    state: 'calling',
    stateAt: at,
    answered: false,
    offerAt,
    answerAt: undefined,
    hangupAt: undefined,
    hangupCause: undefined,
    direction: undefined,
    callingName: undefined,
    callingNumber: undefined,
    calledNumber: undefined,
    otherUuid: undefined,
    requestId: undefined,
    operation: undefined,
    role: undefined,
    userId: undefined,
    gateway: false,
    endUser: undefined,
    peerEndUser: undefined,
    parties: NONE,
    peers: NONE,
    vars: {},
    seenSeq: seq,
  }
}

/** `list` with `item` appended (a new array), or `list` itself when it holds it already. */
export const withItem = (list: readonly string[], item: string): readonly string[] => (list.includes(item) ? list : [...list, item])

/** `list` without `item` (a new array), or `list` itself when it does not hold it. */
export const withoutItem = (list: readonly string[], item: string): readonly string[] =>
  list.includes(item) ? (list.length === 1 ? NONE : list.filter((x) => x !== item)) : list
