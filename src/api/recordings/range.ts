/**
 * The one `Range` a recording's audio is served by (RFC 9110 §14): `bytes=a-b`, `bytes=a-` or
 * `bytes=-n`. Several ranges, another unit or a malformed header are answered with the whole
 * file (a server may ignore Range); a range that starts beyond the end is 416. Numbers are
 * compared as digit strings first, so a range of a hundred digits is neither a float nor a crash.
 */
export type RangeAnswer =
  | { readonly kind: 'whole' }
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' }

const SINGLE_RE = /^bytes=[ \t]*([0-9]*)-([0-9]*)[ \t]*$/
/** Past this many digits a position is beyond any file (2^53 has 16). */
const MAX_DIGITS = 15

/** A position, or Infinity when it has more digits than any file has bytes. */
const position = (digits: string): number => (digits.replace(/^0+(?=.)/, '').length > MAX_DIGITS ? Infinity : Number(digits))

export function rangeOf(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return { kind: 'whole' }
  const m = SINGLE_RE.exec(header)
  if (m === null) return { kind: 'whole' }
  const [, first = '', last = ''] = m
  if (first === '' && last === '') return { kind: 'whole' }
  if (first === '') {
    // The last n bytes.
    const n = position(last)
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'part', start: Math.max(0, size - Math.min(n, size)), end: size - 1 }
  }
  const start = position(first)
  const end = last === '' ? Infinity : position(last)
  if (end < start) return { kind: 'whole' }
  if (start >= size) return { kind: 'unsatisfiable' }
  return { kind: 'part', start, end: Math.min(end, size - 1) }
}
