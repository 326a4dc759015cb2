/**
 * The value rules the IVR language's elements share, one ValueCheck per kind of attribute (a
 * rule only one element uses lives in that element's module). The parser applies them to
 * literal values; resolveParam applies the same ones to rendered templates at run time, so a
 * value is held to one rule whichever way it was written.
 *
 * The alphabets are narrow on purpose: these values end up in FreeSWITCH application arguments
 * and dial strings, where `$ { } , | ' ^` and spaces have meanings
 * (docs/design.md "Security rules").
 */
import { err, ok, type Result } from '../../util/result.js'
import type { HttpMethod, ValueCheck } from './types.js'

const check = <T>(rule: string, convert: (raw: string) => Result<T, string>): ValueCheck<T> => ({ rule, convert })

const must = (rule: string) => err(`must be ${rule}`)

export function intIn(min: number, max: number): ValueCheck<number> {
  const rule = `a whole number from ${min} to ${max}`
  return check(rule, (raw) => {
    const s = raw.trim()
    if (!/^[0-9]{1,9}$/.test(s)) return must(rule)
    const n = Number(s)
    return n >= min && n <= max ? ok(n) : must(rule)
  })
}

/** Seconds with an optional fraction (`0.5`, `2`); no sign, no exponent. */
export function secondsIn(min: number, max: number): ValueCheck<number> {
  const rule = `a number of seconds from ${min} to ${max} (fractions allowed, like 0.5)`
  return check(rule, (raw) => {
    const s = raw.trim()
    if (!/^[0-9]{1,9}(\.[0-9]{1,6})?$/.test(s)) return must(rule)
    const n = Number(s)
    return n >= min && n <= max ? ok(n) : must(rule)
  })
}

export const bool: ValueCheck<boolean> = check('true or false', (raw) => {
  const s = raw.trim()
  return s === 'true' ? ok(true) : s === 'false' ? ok(false) : must('true or false')
})

export function oneOf<T extends string>(values: readonly T[]): ValueCheck<T> {
  const rule = `one of ${values.join(', ')}`
  return check(rule, (raw) => {
    const s = raw.trim()
    const found = values.find((v) => v === s)
    return found !== undefined ? ok(found) : must(`${rule} (case-sensitive)`)
  })
}

/** The method of a fetch (GetJSON, Redirect). */
export const httpMethod: ValueCheck<HttpMethod> = oneOf<HttpMethod>(['POST', 'GET'])

/** DTMF keys FreeSWITCH reports (0-9, *, #, and the rare A-D). */
const DTMF_KEYS = '0123456789*#ABCD'

export function dtmfKeys(minLength: number, maxLength: number): ValueCheck<string> {
  const rule =
    maxLength === 1
      ? minLength === 0
        ? `one DTMF key (0-9 * # A-D) or empty`
        : `one DTMF key (0-9 * # A-D)`
      : `${minLength}-${maxLength} DTMF keys (0-9 * # A-D)`
  return check(rule, (raw) => {
    const s = raw.trim()
    if (s.length < minLength || s.length > maxLength) return must(rule)
    return [...s].every((c) => DTMF_KEYS.includes(c)) ? ok(s) : must(rule)
  })
}

const MAX_URL_LENGTH = 2048
const MAX_URLS = 10

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const SPACE_OR_CONTROL = /[\s\x00-\x1f\x7f]/

export function checkUrl(s: string): Result<string, string> {
  if (s === '') return err('an empty URL')
  if (s.length > MAX_URL_LENGTH) return err(`a URL longer than ${MAX_URL_LENGTH} characters`)
  if (SPACE_OR_CONTROL.test(s)) return err(`${JSON.stringify(s)} contains spaces or control characters`)
  let u: URL
  try {
    u = new URL(s)
  } catch {
    return err(`${JSON.stringify(s)} is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return err(`${JSON.stringify(s)} is not an http or https URL`)
  if (u.hostname === '') return err(`${JSON.stringify(s)} has no host`)
  return ok(s)
}

/**
 * One http(s) URL or a comma list of them (fallbacks, tried in order). A comma inside a URL
 * must be written %2C: docs/ivr.md "Fetching" gives the comma this meaning.
 */
export const urlList: ValueCheck<readonly string[]> = check(
  `http or https URLs separated by commas (at most ${MAX_URLS})`,
  (raw) => {
    const items = raw.split(',').map((x) => x.trim())
    if (items.length > MAX_URLS) return err(`more than ${MAX_URLS} URLs`)
    const urls: string[] = []
    for (const item of items) {
      const u = checkUrl(item)
      if (!u.ok) return err(`must be http or https URLs separated by commas; found ${u.error}`)
      urls.push(u.value)
    }
    return ok(urls)
  },
)

export const SECTION_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/

export const sectionName: ValueCheck<string> = check('a Section name (1-64 of A-Z a-z 0-9 _ . -)', (raw) => {
  const s = raw.trim()
  return SECTION_NAME_RE.test(s) ? ok(s) : must('a Section name (1-64 of A-Z a-z 0-9 _ . -)')
})

/** Variable names of Set and GetJSON (and of the `var_<name>` parameters sent to XML URLs). */
export const VAR_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_EXCEPT_TAB_NEWLINE = /[\x00-\x08\x0b-\x1f\x7f]/

/** Free text (Speak, Set val, Case val): anything printable, newlines and tabs included. */
export function text(allowEmpty: boolean): ValueCheck<string> {
  const rule = allowEmpty ? 'text without control characters' : 'non-empty text without control characters'
  return check(rule, (raw) => {
    if (CONTROL_EXCEPT_TAB_NEWLINE.test(raw)) return err('must not contain control characters')
    if (!allowEmpty && raw.trim() === '') return err('must not be empty')
    return ok(raw)
  })
}
