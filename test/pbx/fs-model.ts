/**
 * A small, independent model of how FreeSWITCH reads an `originate` API argument, written from
 * the sources cited in src/pbx/commands.ts (mod_commands.c originate_function,
 * switch_utils.c switch_separate_string / cleanup_separated_string / switch_find_end_paren,
 * switch_event.c switch_event_create_brackets, switch_ivr_originate.c). Tests use it to show
 * that hostile values cannot change the structure of a command.
 */

const unescapeChar = (c: string): string => ({ n: '\n', r: '\r', t: '\t', s: ' ' })[c] ?? c

/** cleanup_separated_string: quote pairs removed, escapes resolved, outer blanks trimmed. */
function cleanup(str: string, delim: string | null): string {
  let i = 0
  while (str[i] === ' ') i++
  let out = ''
  let end = -1
  let inside = false
  for (; i < str.length; i++) {
    const ch = str[i] ?? ''
    if (ch === '\\' && i + 1 < str.length) {
      const n = str[i + 1] ?? ''
      if (n === "'" || n === '"' || n === '\\' || (delim !== null && n === delim) || unescapeChar(n) !== n) {
        out += n === "'" || n === '"' || n === '\\' || n === delim ? n : unescapeChar(n)
        end = out.length
        i++
        continue
      }
    }
    if (ch === "'" && (inside || str.indexOf("'", i + 1) !== -1)) {
      inside = !inside
      if (inside) end = out.length
    } else {
      out += ch
      if (ch !== ' ' || inside) end = out.length
    }
  }
  return end >= 0 ? out.slice(0, end) : out
}

/** switch_separate_string with a blank delimiter (originate_function's argument split). */
function splitBlank(buf: string): string[] {
  const parts: string[] = []
  let i = 0
  let inside = false
  while (i < buf.length) {
    while (buf[i] === ' ') i++
    if (i >= buf.length) break
    const start = i
    while (i < buf.length) {
      const ch = buf[i]
      if (ch === '\\') i++
      else if (ch === "'") inside = !inside
      else if (ch === ' ' && !inside) break
      i++
    }
    parts.push(buf.slice(start, Math.min(i, buf.length)))
  }
  return parts.map((p) => cleanup(p, null))
}

/** switch_separate_string with a character delimiter (and the `^^<c>` prefix). */
function splitChar(input: string, delim: string): string[] {
  let buf = input
  let d = delim
  if (buf.startsWith('^^') && buf.length > 3) {
    d = buf[2] ?? d
    buf = buf.slice(3)
  }
  const parts: string[] = []
  let start = 0
  let inside = false
  for (let i = 0; i < buf.length; i++) {
    const ch = buf[i]
    if (ch === '\\') i++
    else if (ch === "'" && (inside || buf.indexOf("'", i + 1) !== -1)) inside = !inside
    else if (ch === d && !inside) {
      parts.push(buf.slice(start, i))
      start = i + 1
    }
  }
  parts.push(buf.slice(start))
  return parts.filter((p, i) => !(i === 0 && p === '' && buf === '')).map((p) => cleanup(p, d))
}

/** switch_find_end_paren: index of the bracket closing the one at 0, or -1. */
function findEnd(s: string, open: string, close: string): number {
  let depth = 0
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]
    if (ch === open && (i === 0 || open !== close)) depth++
    else if (ch === close) {
      depth--
      if (depth === 0) return i
    }
  }
  return -1
}

export interface ParsedOriginate {
  readonly args: readonly string[]
  readonly globals: ReadonlyMap<string, string>
  /** `|` groups of `,` legs. */
  readonly groups: ReadonlyArray<ReadonlyArray<{ readonly vars: ReadonlyMap<string, string>; readonly endpoint: string }>>
  readonly enterprise: boolean
  readonly nestedVars: boolean
}

function readVars(body: string, delim: string, into: Map<string, string>) {
  for (const item of splitChar(body, delim)) {
    const eq = item.indexOf('=')
    if (eq > 0) into.set(item.slice(0, eq), item.slice(eq + 1))
  }
}

/** Reads `originate <dialstring> <ext> <dp> <ctx>` as FreeSWITCH would. */
export function parseOriginate(command: string): ParsedOriginate {
  if (!command.startsWith('originate ')) throw new Error('not an originate')
  const args = splitBlank(command.slice('originate '.length))
  let data = args[0] ?? ''
  const globals = new Map<string, string>()
  while (data.startsWith('<') || data.startsWith('{')) {
    const open = data[0] ?? ''
    const close = open === '<' ? '>' : '}'
    const end = findEnd(data, open, close)
    if (end < 0) throw new Error('parse error')
    readVars(data.slice(1, end), ',', globals)
    data = data.slice(end + 1)
  }
  const groups = splitChar(data, '|').map((group) => {
    // commas inside a leg's [...] do not split legs
    const legs: string[] = []
    let depth = 0
    let start = 0
    for (let i = 0; i < group.length; i++) {
      const ch = group[i]
      if (ch === '[') depth++
      else if (ch === ']') depth--
      else if (ch === ',' && depth === 0) {
        legs.push(group.slice(start, i))
        start = i + 1
      }
    }
    legs.push(group.slice(start))
    return legs.map((leg) => {
      const vars = new Map<string, string>()
      let rest = leg.trimStart()
      while (rest.startsWith('[')) {
        const end = findEnd(rest, '[', ']')
        if (end < 0) throw new Error('parse error')
        readVars(rest.slice(1, end), ',', vars)
        rest = rest.slice(end + 1)
      }
      return { vars, endpoint: rest }
    })
  })
  return {
    args,
    globals,
    groups,
    enterprise: (args[0] ?? '').includes(':_:'),
    nestedVars: /origination_nested_vars=true/i.test(args[0] ?? ''),
  }
}

/**
 * A leg's own hangup record, as pbx/commands.ts hangupRecordVar writes it into the leg's `[...]`:
 * the fixed `${hangup_cause}:${answer_epoch}` around the domain's realm and a key ending with that
 * leg's own origination_uuid (backreference), last of the leg's variables.
 */
const OWN_HANGUP_RECORD =
  /\[origination_uuid=([0-9a-f-]{36})((?:,[^\]]*)?),api_hangup_hook='hash insert\/cod_[a-z0-9.-]+\/[0-9a-f-]{36}\.\1\/\$\{hangup_cause\}:\$\{answer_epoch\}'\]/gi

/**
 * What lets the records' `${` past the originate's check (switch_stristr of the text anywhere in
 * the dial string): the value of the first of its globals, nowhere else.
 */
const OWN_NESTED_VARS = /^((?:bgapi |api )?originate )\{cod_leg_records=origination_nested_vars=true,/

/**
 * The command without the daemon's own hangup records and the `origination_nested_vars=true`
 * that lets them through (only when there was a record to let through): what is left must then
 * hold no `$` and no other `origination_nested_vars=true`, exactly like any other command.
 */
export function withoutOwnRecords(command: string): string {
  const stripped = command.replace(OWN_HANGUP_RECORD, '[origination_uuid=$1$2]')
  return stripped === command ? command : stripped.replace(OWN_NESTED_VARS, '$1{')
}
