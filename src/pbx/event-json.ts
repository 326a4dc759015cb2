/**
 * An event's `text/event-json` body read into the header map the daemon hands around, as
 * esl-lite read it when it read the events for the daemon (processRawEvent in
 * node_modules/esl-lite/esl-lite.mjs: JSON.parse of the body, an object with a string
 * Event-Name, else an invalid body). The daemon's own reader hands the bodies here
 * (src/pbx/esl-reader.ts).
 *
 * The channel events that make up most of a call (CHANNEL_CREATE to CHANNEL_DESTROY) are read
 * for the headers the daemon reads only (event-headers.ts), by one pass over the text: a real
 * one carries 90 to 300 headers, most of them channel variables nobody here reads, and
 * JSON.parse built every one (from 128 on, as a dictionary-mode object). That parse was the
 * largest item of the daemon's CPU profile (20 % of its main thread in the api benchmark) and
 * half of what it allocated per call (docs/bench.md). The pass accepts only what JSON.parse
 * reads the same way: a compact object of strings and arrays of strings, Event-Name first, as
 * switch_event_serialize_json writes it (cJSON, unformatted); anything else (whitespace, an
 * escape in a name, a bad escape, a non-ASCII byte) is read by JSON.parse as before, so the
 * result is JSON.parse's, restricted to those headers (test/pbx/event-json.test.ts compares the
 * two; arrays are left out by both, as no reader here expects one). One difference is
 * left on purpose: a raw control character inside a string, which JSON.parse refuses and cJSON
 * never writes (print_string_ptr escapes every character below 0x20), is taken as it is: looking
 * for one cost as much as the rest of the pass.
 */
import { isAscii } from 'node:buffer'
import { EVENT_HEADERS } from './event-headers.js'
import { DELIVERED_EVENTS } from './event-filter.js'
import type { FsEvent } from './types.js'

/**
 * The events read for the daemon's headers only: the channel events it follows (event-filter.ts),
 * the channel's life, sent for every leg; not CHANNEL_PARK, whose IVR reader hands every header
 * on (ivr/runner/call.ts asForm).
 * @internal Exported for tests: test/pbx checks the picked events.
 */
export const PICKED_EVENTS: ReadonlySet<string> = new Set(DELIVERED_EVENTS.filter((name) => name.startsWith('CHANNEL_') && name !== 'CHANNEL_PARK'))

/**
 * The headers, or undefined when the body is not an event esl-lite would emit (not JSON, not
 * an object, no Event-Name). event-json values are strings, except a header FreeSWITCH holds
 * as an array (switch_event_serialize_json: a JSON array), which no reader here expects: such
 * values are left out. The object is handed on as it is, not copied.
 */
export function readEventJson(body: Buffer): FsEvent | undefined {
  // Decoded once: an ASCII body (nearly every one) reads the same in latin1 as in UTF-8, and
  // latin1 is the cheaper decoder; the pass needs it so (pickFromAscii).
  const ascii = isAscii(body)
  const text = body.toString(ascii ? 'latin1' : 'utf8')
  return (ascii ? pickFromAscii(text, body) : undefined) ?? parseEvent(text)
}

/** JSON.parse of the whole body, as esl-lite reads it. */
function parseEvent(text: string): FsEvent | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const data = parsed as Record<string, unknown>
  if (typeof data['Event-Name'] !== 'string') return undefined
  // switch_event_serialize_json (switch_event.c) writes every header as a string, or as an array
  // of strings when FreeSWITCH holds it as one: without a '[' anywhere there is no array, and
  // the walk over every header can be skipped.
  return text.includes('[') ? toFsEvent(data) : (data as FsEvent)
}

/** Parsed event data as a header map of strings (non-string values removed in place). */
function toFsEvent(data: Record<string, unknown>): FsEvent {
  for (const k in data) if (typeof data[k] !== 'string') delete data[k]
  return data as FsEvent
}

const EVENT_NAME_START = '{"Event-Name":"'
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * The wanted header names by length, each with its character codes: a name in the text is
 * compared only with those of its length, in place (no string made for it).
 */
const NAMES_BY_LENGTH: ReadonlyArray<ReadonlyArray<{ readonly name: string; readonly codes: readonly number[] }> | undefined> = (() => {
  const by: Array<Array<{ name: string; codes: number[] }>> = []
  for (const name of EVENT_HEADERS) (by[name.length] ??= []).push({ name, codes: Array.from(name, (ch) => ch.charCodeAt(0)) })
  return by
})()

/**
 * The daemon's headers of a channel event, or undefined to leave the body to JSON.parse (another
 * event, or a body the pass does not read exactly as JSON.parse would).
 *
 * ASCII bodies only (nearly all: a channel's non-ASCII text, a caller name, is rare and goes to
 * JSON.parse), so that a character's index is its byte's, and each value kept is decoded from the
 * bytes into a string of its own. A `slice` of the body's text would be a V8 sliced string that
 * keeps the whole ~5 kB text alive as long as the value lives: a channel record's UUID, or an
 * interned caller number, held every event body it came from (3.5 kB per live call in the scale
 * benchmark, against 430 B).
 * @internal Exported for tests: test/pbx feeds it captured events.
 */
export function pickChannelEvent(body: Buffer): FsEvent | undefined {
  return isAscii(body) ? pickFromAscii(body.toString('latin1'), body) : undefined
}

/** pickChannelEvent of an ASCII body, given its text as well. */
function pickFromAscii(text: string, body: Buffer): FsEvent | undefined {
  if (!text.startsWith(EVENT_NAME_START)) return undefined
  const nameEnd = text.indexOf('"', EVENT_NAME_START.length)
  if (nameEnd < 0 || !PICKED_EVENTS.has(text.slice(EVENT_NAME_START.length, nameEnd))) return undefined
  const out: Record<string, string> = {}
  const strings = new StringEnds(text)
  let at = 1
  for (;;) {
    // A name: '"', no escape in it, '"', ':'.
    if (text.charCodeAt(at) !== QUOTE) return undefined
    const nameStart = at + 1
    const nameClose = text.indexOf('"', nameStart)
    if (nameClose < 0 || strings.backslashBefore(nameClose, nameStart)) return undefined
    if (text.charCodeAt(nameClose + 1) !== COLON) return undefined
    const valueOpen = nameClose + 2
    // An array of strings (a header FreeSWITCH holds several values of): left out, as parseEvent
    // leaves it out. On a real switch most events of a bridged leg hold one.
    if (text.charCodeAt(valueOpen) === OPEN_BRACKET) {
      const arrayClose = skipStringArray(text, valueOpen, strings)
      if (arrayClose < 0) return undefined
      const next = text.charCodeAt(arrayClose + 1)
      if (next === COMMA) {
        at = arrayClose + 2
        continue
      }
      return next === CLOSE_BRACE && arrayClose + 2 === text.length ? (out as FsEvent) : undefined
    }
    // A string value.
    if (text.charCodeAt(valueOpen) !== QUOTE) return undefined
    const valueClose = strings.close(valueOpen + 1)
    if (valueClose < 0) return undefined
    const name = wantedName(text, nameStart, nameClose - nameStart)
    if (name !== undefined) {
      const value = strings.backslashBefore(valueClose, valueOpen + 1) ? unescape(text, valueOpen, valueClose) : body.toString('latin1', valueOpen + 1, valueClose)
      if (value === undefined) return undefined
      out[name] = value
    }
    // Then ',' and the next name, or the closing brace that ends the body.
    const next = text.charCodeAt(valueClose + 1)
    if (next === COMMA) at = valueClose + 2
    else if (next === CLOSE_BRACE && valueClose + 2 === text.length) return out as FsEvent
    else return undefined
  }
}

/** The index of the ']' closing the array of strings opened at `open` (`[]`, `["a"]`, `["a","b"]`), or -1. */
function skipStringArray(text: string, open: number, strings: StringEnds): number {
  let at = open + 1
  if (text.charCodeAt(at) === CLOSE_BRACKET) return at
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return -1
    const close = strings.close(at + 1)
    if (close < 0) return -1
    const next = text.charCodeAt(close + 1)
    if (next === CLOSE_BRACKET) return close + 1
    if (next !== COMMA) return -1
    at = close + 2
  }
}

/**
 * The wanted header named by text[start, start + length), if it is one. Compared from the last
 * character back: most names share their start (`variable_`, `Caller-`) and differ at the end.
 * (String.startsWith at an offset was slower than all the rest of the pass together.)
 */
function wantedName(text: string, start: number, length: number): string | undefined {
  const candidates = NAMES_BY_LENGTH[length]
  if (candidates === undefined) return undefined
  for (let c = 0; c < candidates.length; c++) {
    const { name, codes } = candidates[c] as { readonly name: string; readonly codes: readonly number[] }
    let k = length - 1
    while (k >= 0 && text.charCodeAt(start + k) === codes[k]) k--
    if (k < 0) return name
  }
  return undefined
}

/** A value with escapes, decoded by JSON.parse itself (undefined if it refuses it). */
function unescape(text: string, open: number, close: number): string | undefined {
  try {
    return JSON.parse(text.slice(open, close + 1)) as string
  } catch {
    return undefined
  }
}

/**
 * Where the strings of one body end. Backslashes are rare in an event (a quoted display name, an
 * SDP), so the next one is looked up once and kept: a string without one ends at its next quote.
 */
class StringEnds {
  private nextBackslash = -1
  private searchedFrom = -1

  constructor(private readonly text: string) {}

  /** Whether a backslash lies in text[from, to). */
  backslashBefore(to: number, from: number): boolean {
    const b = this.backslashFrom(from)
    return b >= 0 && b < to
  }

  /** The index of the quote that closes the string whose content starts at `from`, or -1 (unclosed, or an escape JSON refuses). */
  close(from: number): number {
    const text = this.text
    let at = from
    let quote = text.indexOf('"', at)
    for (;;) {
      if (quote < 0) return -1
      const b = this.backslashFrom(at)
      if (b < 0 || b > quote) return quote
      // An escape before the quote: skip it whole; look for the next quote again only when the
      // escape took this one (an SDP holds dozens of escapes and no quote).
      const escapeEnd = escapeLength(text, b)
      if (escapeEnd < 0) return -1
      at = escapeEnd
      if (quote < at) quote = text.indexOf('"', at)
    }
  }

  private backslashFrom(from: number): number {
    if (this.searchedFrom >= 0 && (this.nextBackslash < 0 || this.nextBackslash >= from) && this.searchedFrom <= from) return this.nextBackslash
    this.searchedFrom = from
    this.nextBackslash = this.text.indexOf('\\', from)
    return this.nextBackslash
  }
}

const HEX = /^[0-9a-fA-F]{4}$/

/** The index after the JSON escape starting with the backslash at `b`, or -1 if JSON refuses it. */
function escapeLength(text: string, b: number): number {
  switch (text.charCodeAt(b + 1)) {
    case QUOTE:
    case BACKSLASH:
    case 0x2f: // '/'
    case 0x62: // 'b'
    case 0x66: // 'f'
    case 0x6e: // 'n'
    case 0x72: // 'r'
    case 0x74: // 't'
      return b + 2
    case 0x75: // 'u'
      return HEX.test(text.slice(b + 2, b + 6)) ? b + 6 : -1
    default:
      return -1
  }
}
