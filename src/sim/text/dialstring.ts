/**
 * The originate dial string grammar, read as switch_ivr_originate (switch_ivr_originate.c,
 * v1.10.12) reads it:
 *
 *   [<ultra globals>]* [{globals}]* group ( '|' group )*      group = leg ( ',' leg )*
 *   leg = [ '[' local vars ']' ]* endpoint
 *
 * `<...>` and `{...}` are switch_event_create_brackets with `,`; groups are split with
 * switch_separate_string('|'); inside a group, commas within `[...]` are first protected
 * (QUOTED_ESC_COMMA when quoted or after `[^^`, else UNQUOTED_ESC_COMMA) and the group is split
 * with switch_separate_string(','); a leg's `[...]` is then read with the unquoted escape as
 * delimiter and the quoted one turned back into `,`. `:_:` (enterprise originate) is not supported.
 */
import { createBrackets, findEndParen, separateString, type VarList } from './fs-strings.js'

const QUOTED_ESC_COMMA = '\x01'
const UNQUOTED_ESC_COMMA = '\x02'

export interface DialLeg {
  /** The leg's own `[...]` variables, in order. */
  readonly vars: VarList
  /** What is left: `sofia/...`, `user/...`, `error/...`. */
  readonly endpoint: string
}

export interface DialString {
  /** `<...>` then `{...}` variables, in order. */
  readonly globals: VarList
  /** Failover groups (`|`), each a list of legs rung together (`,`). */
  readonly groups: ReadonlyArray<ReadonlyArray<DialLeg>>
}

/** Parses a dial string; `undefined` for what switch_ivr_originate reports as "Parse Error!". */
export function parseDialString(input: string): DialString | undefined {
  let data = input.replace(/^ +/, '')
  const globals: VarList = []
  while (data.startsWith('<')) {
    const rest = createBrackets(data, '<', '>', ',', globals)
    if (rest === undefined) return undefined
    data = rest
  }
  while (data.startsWith('{')) {
    const rest = createBrackets(data, '{', '}', ',', globals)
    if (rest === undefined) return undefined
    data = rest
  }
  data = data.replace(/^ +/, '')
  if (data === '') return undefined
  if (data.includes(':_:')) return undefined

  const groups: DialLeg[][] = []
  for (const groupText of separateString(data, '|')) {
    const legs: DialLeg[] = []
    for (const legText of separateString(protectBracketCommas(groupText), ',')) {
      const leg = parseLeg(legText)
      if (leg === undefined) return undefined
      legs.push(leg)
    }
    if (legs.length > 0) groups.push(legs)
  }
  return groups.length > 0 ? { globals, groups } : undefined
}

/** The comma protection pass of switch_ivr_originate (before splitting a group on `,`). */
function protectBracketCommas(text: string): string {
  const chars = [...text]
  let end = -1
  let q = false
  let alt = false
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]
    if (end < 0 && ch === '[') {
      end = findEndParen(text, i, '[', ']')
      alt = chars[i + 1] === '^' && chars[i + 2] === '^'
      q = false
    }
    if (ch === "'") q = !q
    if (end >= 0 && i < end && ch === ',' && chars[i - 1] !== '\\') {
      chars[i] = q || alt ? QUOTED_ESC_COMMA : UNQUOTED_ESC_COMMA
    }
    if (i === end) end = -1
  }
  return chars.join('')
}

function parseLeg(text: string): DialLeg | undefined {
  let chanType = text.replace(/^ +/, '')
  const vars: VarList = []
  while (chanType.startsWith('[')) {
    const bend = findEndParen(chanType, 0, '[', ']')
    const head = bend < 0 ? chanType : chanType.slice(0, bend).split(QUOTED_ESC_COMMA).join(',') + chanType.slice(bend)
    const rest = createBrackets(head, '[', ']', UNQUOTED_ESC_COMMA, vars)
    if (rest === undefined || rest === head) return undefined
    chanType = rest
  }
  // A leg cannot carry protected commas outside its brackets.
  const endpoint = chanType.split(QUOTED_ESC_COMMA).join(',').split(UNQUOTED_ESC_COMMA).join(',')
  if (endpoint === '') return undefined
  return { vars, endpoint }
}

/** Last value wins, as with switch_event_add_header on a unique-headers event. */
export function varsToMap(...lists: VarList[]): Map<string, string> {
  const m = new Map<string, string>()
  for (const list of lists) for (const [k, v] of list) m.set(k, v)
  return m
}
