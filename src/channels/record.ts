/**
 * The writable form of a channel record, and its one constructor. Every record is an instance
 * of one class with every field set in its constructor, so all records share one shape (V8
 * keeps them compact and their field reads fast). Only the model's own modules see the
 * writable form; readers see the plain fields of ChannelRecord (types.ts), some of which are
 * accessors on the class's prototype over a more compact storage. Each field of the instance
 * costs 8 bytes per live call (x64 Node without pointer compression), and accessors cost
 * nothing per instance: the scale benchmark's heap per live call (docs/bench.md) is mostly
 * these records.
 *
 * - Times are kept as milliseconds from TIME_BASE (when this module loaded) and read back as
 *   epoch milliseconds: an epoch millisecond count does not fit V8's small integers, so each
 *   time field held a boxed number of its own (16 B more per time). Offsets stay small
 *   integers for ±24 days around the start; past that V8 boxes them again, correctly.
 * - `state`, `answered`, `direction` and `gateway` share one small integer (`flags`).
 * - The fields a live answered call seldom has (its hangup, the leg it is bridged to, end_user,
 *   the legs it was connected to) live in one side object, made when the first of them is set.
 * - Accessors are not own properties: a record spread (`{ ...ch }`) or serialised whole loses
 *   them. Readers read the fields they need (src/cti/view.ts does).
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

// `flags`: bits 0-2 the state (its index in STATES), bit 3 answered, bits 4-5 the direction
// (its index in DIRECTIONS), bit 6 gateway. 0 is a new record: calling, not answered, no
// direction, no gateway.
const STATES: readonly ChannelState[] = ['calling', 'ringing', 'answered', 'bridged', 'park', 'ivr', 'hangup']
const STATE_INDEX: ReadonlyMap<unknown, number> = new Map(STATES.map((s, i) => [s, i]))
const STATE_MASK = 0b111
const ANSWERED = 1 << 3
const DIRECTIONS: readonly (CallDirection | undefined)[] = [undefined, 'inbound', 'outbound']
const DIRECTION_INDEX: ReadonlyMap<unknown, number> = new Map(DIRECTIONS.map((d, i) => [d, i]))
const DIRECTION_SHIFT = 4
const DIRECTION_MASK = 0b11 << DIRECTION_SHIFT
const GATEWAY = 1 << 6

/** The index of `value` in a flags field's list; anything else is a bug, thrown. */
function indexIn(index: ReadonlyMap<unknown, number>, value: unknown, what: string): number {
  const i = index.get(value)
  if (i === undefined) throw new Error(`not a ${what}: ${String(value)}`)
  return i
}

/** What a record seldom has while its call is up. All fields set here: one shape for all. */
class Seldom {
  hangupOffset: number | undefined = undefined
  hangupCause: string | undefined = undefined
  otherUuid: string | undefined = undefined
  endUser: EndUser | undefined = undefined
  peerEndUser: EndUser | undefined = undefined
  peers: readonly string[] = NONE
}

class Channel implements MutableChannel {
  domain: string | undefined = undefined
  private flags = 0
  private stateOffset: number
  private readonly offerOffset: number
  private answerOffset: number | undefined = undefined
  callingName: string | undefined = undefined
  callingNumber: string | undefined = undefined
  calledNumber: string | undefined = undefined
  requestId: string | undefined = undefined
  operation: string | undefined = undefined
  role: string | undefined = undefined
  userId: string | undefined = undefined
  parties: readonly string[] = NONE
  vars: Record<string, string> = {}
  /** Undefined until one of its fields is set to something. */
  private seldom: Seldom | undefined = undefined

  constructor(
    readonly uuid: string,
    at: number,
    offerAt: number,
    public seenSeq: number,
  ) {
    this.stateOffset = toOffset(at)
    this.offerOffset = toOffset(offerAt)
  }

  /** Replaces the bits of `flags` under `mask` with `bits`. */
  private setFlags(mask: number, bits: number): void {
    this.flags = (this.flags & ~mask) | bits
  }
  get state(): ChannelState {
    return STATES[this.flags & STATE_MASK] as ChannelState
  }
  set state(state: ChannelState) {
    this.setFlags(STATE_MASK, indexIn(STATE_INDEX, state, 'channel state'))
  }
  get answered(): boolean {
    return (this.flags & ANSWERED) !== 0
  }
  set answered(yes: boolean) {
    this.setFlags(ANSWERED, yes ? ANSWERED : 0)
  }
  get direction(): CallDirection | undefined {
    return DIRECTIONS[(this.flags & DIRECTION_MASK) >> DIRECTION_SHIFT]
  }
  set direction(direction: CallDirection | undefined) {
    this.setFlags(DIRECTION_MASK, indexIn(DIRECTION_INDEX, direction, 'call direction') << DIRECTION_SHIFT)
  }
  get gateway(): boolean {
    return (this.flags & GATEWAY) !== 0
  }
  set gateway(yes: boolean) {
    this.setFlags(GATEWAY, yes ? GATEWAY : 0)
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

  /** Writes a seldom field; the side object is made only when `value` is not the field's default (`unset`). */
  private setSeldom<K extends keyof Seldom>(key: K, value: Seldom[K], unset: Seldom[K]): void {
    if (this.seldom === undefined) {
      if (value === unset) return
      this.seldom = new Seldom()
    }
    this.seldom[key] = value
  }
  get hangupAt(): number | undefined {
    return fromOffset(this.seldom?.hangupOffset)
  }
  set hangupAt(ms: number | undefined) {
    this.setSeldom('hangupOffset', ms === undefined ? undefined : toOffset(ms), undefined)
  }
  get hangupCause(): string | undefined {
    return this.seldom?.hangupCause
  }
  set hangupCause(cause: string | undefined) {
    this.setSeldom('hangupCause', cause, undefined)
  }
  get otherUuid(): string | undefined {
    return this.seldom?.otherUuid
  }
  set otherUuid(uuid: string | undefined) {
    this.setSeldom('otherUuid', uuid, undefined)
  }
  get endUser(): EndUser | undefined {
    return this.seldom?.endUser
  }
  set endUser(endUser: EndUser | undefined) {
    this.setSeldom('endUser', endUser, undefined)
  }
  get peerEndUser(): EndUser | undefined {
    return this.seldom?.peerEndUser
  }
  set peerEndUser(endUser: EndUser | undefined) {
    this.setSeldom('peerEndUser', endUser, undefined)
  }
  get peers(): readonly string[] {
    return this.seldom?.peers ?? NONE
  }
  set peers(peers: readonly string[]) {
    this.setSeldom('peers', peers, NONE)
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
