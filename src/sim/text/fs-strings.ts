/**
 * FreeSWITCH's own string splitting, ported line by line so that the simulator reads dial
 * strings and API arguments exactly as FreeSWITCH 1.10.12 does (and so that the daemon's
 * escaping is tested against the real rules, not a friendlier copy):
 *
 * - switch_utils.c: switch_separate_string (with the `^^<c>` delimiter prefix),
 *   separate_string_char_delim, separate_string_blank_delim, cleanup_separated_string,
 *   unescape_char, switch_find_end_paren, switch_url_encode (SWITCH_URL_UNSAFE from switch_utils.h).
 * - switch_event.c: switch_event_create_brackets.
 */

const ESCAPE_META = '\\'

/** unescape_char: \n \r \t \s; any other character is returned as is. */
function unescapeChar(c: string): string {
  switch (c) {
    case 'n':
      return '\n'
    case 'r':
      return '\r'
    case 't':
      return '\t'
    case 's':
      return ' '
    default:
      return c
  }
}

/**
 * cleanup_separated_string: skips leading blanks, removes quote pairs, resolves escapes and
 * trims trailing blanks (blanks inside quotes are kept).
 * @internal Exported for tests: test/sim checks FreeSWITCH's quoting rules on it.
 */
export function cleanupSeparatedString(str: string, delim: string | null): string {
  let i = 0
  while (str[i] === ' ') i++
  let out = ''
  let end = -1
  let insideQuotes = false
  for (; i < str.length; i++) {
    const ch = str[i] as string
    let esc = false
    if (ch === ESCAPE_META && i + 1 < str.length) {
      const next = str[i + 1] as string
      const un = unescapeChar(next)
      if (next === "'" || next === '"' || (delim !== null && next === delim) || next === ESCAPE_META || un !== next) {
        i++
        out += next === "'" || next === '"' || next === ESCAPE_META || (delim !== null && next === delim) ? next : un
        end = out.length
        esc = true
      }
    }
    if (!esc) {
      if (ch === "'" && (insideQuotes || str.indexOf("'", i + 1) !== -1)) {
        insideQuotes = !insideQuotes
        if (insideQuotes) end = out.length
      } else {
        out += ch
        if (ch !== ' ' || insideQuotes) end = out.length
      }
    }
  }
  return end >= 0 ? out.slice(0, end) : out
}

function separateCharDelim(buf: string, delim: string, max: number): string[] {
  const parts: string[] = []
  let start = 0
  let insideQuotes = false
  let i = 0
  let inPart = false
  while (i < buf.length && (parts.length < max || inPart)) {
    if (!inPart) {
      start = i
      inPart = true
      if (parts.length + 1 >= max) {
        // The last slot takes the rest of the string unsplit (the C loop stops at arraylen).
        parts.push(buf.slice(start))
        inPart = false
        i = buf.length
        break
      }
      // START consumes no character: fall through to FIND_DELIM on the same one.
    }
    const ch = buf[i] as string
    if (ch === ESCAPE_META) {
      i++
    } else if (ch === "'" && (insideQuotes || buf.indexOf("'", i + 1) !== -1)) {
      insideQuotes = !insideQuotes
    } else if (ch === delim && !insideQuotes) {
      parts.push(buf.slice(start, i))
      inPart = false
    }
    i++
  }
  if (inPart) parts.push(buf.slice(start))
  return parts.map((p) => cleanupSeparatedString(p, delim))
}

function separateBlankDelim(buf: string, max: number): string[] {
  const parts: string[] = []
  let i = 0
  let insideQuotes = false
  while (i < buf.length && parts.length < max) {
    const start = i
    if (parts.length + 1 >= max) {
      parts.push(buf.slice(start))
      break
    }
    while (i < buf.length && buf[i] === ' ') i++
    let end = buf.length
    while (i < buf.length) {
      const ch = buf[i] as string
      if (ch === ESCAPE_META) {
        i++
      } else if (ch === "'") {
        insideQuotes = !insideQuotes
      } else if (ch === ' ' && !insideQuotes) {
        end = i
        i++
        break
      }
      i++
    }
    parts.push(buf.slice(start, Math.min(end, buf.length)))
    while (i < buf.length && buf[i] === ' ') i++
  }
  return parts.map((p) => cleanupSeparatedString(p, null))
}

/** switch_separate_string, including the `^^<c>` prefix that changes the delimiter. */
export function separateString(input: string, delim: string, max = 1024): string[] {
  let buf = input
  let d = delim
  if (buf.startsWith('^^') && buf.length > 3) {
    d = buf[2] as string
    buf = buf.slice(3)
  }
  if (buf === '') return []
  return d === ' ' ? separateBlankDelim(buf, max) : separateCharDelim(buf, d, max)
}

/** switch_find_end_paren: index of the bracket closing the one at `from` (after blanks), or -1. */
export function findEndParen(s: string, from: number, open: string, close: string): number {
  let i = from
  while (s[i] === ' ') i++
  if (s[i] !== open) return -1
  let depth = 1
  for (i = i + 1; i < s.length; i++) {
    const ch = s[i]
    if (ch === open && open !== close) depth++
    else if (ch === close) {
      depth--
      if (depth === 0) return i
    }
  }
  return -1
}

export type VarList = Array<[string, string]>

/**
 * switch_event_create_brackets: reads one `<a>k=v,k=v<b>` group at the start of `data`
 * (callers loop for `{a=1}{b=2}`, as switch_ivr_originate does), appends the variables to
 * `vars` and returns the rest of the string, or undefined on a parse error (no closing
 * bracket). `^^<c>` right after the opening bracket changes the delimiter; each item is split
 * on its first `=` only (switch_separate_string with an array of 2), so values may hold `=`.
 */
export function createBrackets(data: string, a: string, b: string, delim: string, vars: VarList): string | undefined {
  const end = findEndParen(data, 0, a, b)
  if (end < 0) return undefined
  let g = data.slice(data.indexOf(a) + 1, end)
  let d = delim
  if (g.startsWith('^^') && g.length >= 3) {
    d = g[2] as string
    g = g.slice(3)
  }
  for (const item of separateString(g, d)) {
    const kv = separateString(item, '=', 2)
    if (kv.length === 2) vars.push([kv[0] as string, kv[1] as string])
  }
  return data.slice(end + 1)
}

/** SWITCH_URL_UNSAFE (switch_utils.h): characters switch_url_encode always escapes. */
const URL_UNSAFE = '\r\n #%&+:;<=>?@[\\]^`{|}"'

/**
 * switch_url_encode (no double encoding): escapes control and non-ASCII bytes and the unsafe
 * set as %XX (upper case); an existing %XX sequence is kept. Used for event-plain values and
 * mod_xml_curl form values (test/fixtures/freeswitch/esl/08-originate-user-form-event-plain.txt and
 * xml_curl/*: `,` stays raw, ` ` `:` `@` are escaped).
 */
export function urlEncode(value: string): string {
  const bytes = Buffer.from(value, 'utf8')
  let out = ''
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number
    const ch = String.fromCharCode(b)
    if (b === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1] as number) && isHex(bytes[i + 2] as number)) {
      out += ch
      continue
    }
    if (b < 0x20 || b > 0x7e || URL_UNSAFE.includes(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
    else out += ch
  }
  return out
}

const isHex = (b: number): boolean => (b >= 48 && b <= 57) || (b >= 65 && b <= 70) || (b >= 97 && b <= 102)
