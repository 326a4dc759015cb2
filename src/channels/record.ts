/**
 * The writable form of a channel record, and its one constructor. Every record is an instance
 * of one class with every field set in its constructor, so all records share one shape (V8
 * keeps them compact and their field reads fast). Only the model's own modules see the
 * writable form.
 *
 * Times are kept as milliseconds from TIME_BASE (when this module loaded) and read back as
 * epoch milliseconds through accessors: an epoch millisecond count does not fit V8's small
 * integers, so each time field held a boxed number of its own (16 B more per time, three or
 * four per live call: the scale benchmark's heap per live call, docs/bench.md). Offsets stay
 * small integers for ±24 days around the start; past that V8 boxes them again, correctly.
 */
import type { ChannelRecord, ChannelState, CallDirection } from './types.js'
import type { EndUser } from '../pbx/end-user.js'

export type MutableChannel = { -readonly [K in keyof ChannelRecord]: ChannelRecord[K] } & {
  vars: Record<string, string>
}

/** Shared by every record that has no parties or peers yet: arrays are replaced, never mutated. */
const NONE: readonly string[] = Object.freeze([])

/** Whole seconds, so that offsets of event times (whole milliseconds) stay whole. */
const TIME_BASE = Math.floor(Date.now() / 1000) * 1000

const toOffset = (ms: number): number => ms - TIME_BASE
const fromOffset = (o: number | undefined): number | undefined => (o === undefined ? undefined : o + TIME_BASE)

class Channel implements MutableChannel {
  domain: string | undefined = undefined
  state: ChannelState = 'calling'
  private stateOffset: number
  answered = false
  private readonly offerOffset: number
  private answerOffset: number | undefined = undefined
  private hangupOffset: number | undefined = undefined
  hangupCause: string | undefined = undefined
  direction: CallDirection | undefined = undefined
  callingName: string | undefined = undefined
  callingNumber: string | undefined = undefined
  calledNumber: string | undefined = undefined
  otherUuid: string | undefined = undefined
  requestId: string | undefined = undefined
  operation: string | undefined = undefined
  role: string | undefined = undefined
  userId: string | undefined = undefined
  gateway = false
  endUser: EndUser | undefined = undefined
  peerEndUser: EndUser | undefined = undefined
  parties: readonly string[] = NONE
  peers: readonly string[] = NONE
  vars: Record<string, string> = {}

  constructor(
    readonly uuid: string,
    at: number,
    offerAt: number,
    public seenSeq: number,
  ) {
    this.stateOffset = toOffset(at)
    this.offerOffset = toOffset(offerAt)
  }

  get stateAt(): number {
    return this.stateOffset + TIME_BASE
  }
  set stateAt(ms: number) {
    this.stateOffset = toOffset(ms)
  }
  get offerAt(): number {
    return this.offerOffset + TIME_BASE
  }
  set offerAt(_ms: number) {
    throw new Error('offerAt is set once, when the record is made')
  }
  get answerAt(): number | undefined {
    return fromOffset(this.answerOffset)
  }
  set answerAt(ms: number | undefined) {
    this.answerOffset = ms === undefined ? undefined : toOffset(ms)
  }
  get hangupAt(): number | undefined {
    return fromOffset(this.hangupOffset)
  }
  set hangupAt(ms: number | undefined) {
    this.hangupOffset = ms === undefined ? undefined : toOffset(ms)
  }
}

export function newChannel(uuid: string, at: number, offerAt: number, seq: number): MutableChannel {
  return new Channel(uuid, at, offerAt, seq)
}

/** `list` with `item` appended (a new array), or `list` itself when it holds it already. */
export const withItem = (list: readonly string[], item: string): readonly string[] => (list.includes(item) ? list : [...list, item])

/** `list` without `item` (a new array), or `list` itself when it does not hold it. */
export const withoutItem = (list: readonly string[], item: string): readonly string[] =>
  list.includes(item) ? (list.length === 1 ? NONE : list.filter((x) => x !== item)) : list
