/**
 * Whether a JSON Schema `pattern` is portable (issue 26): ECMA-262 with the `u` flag (ajv and
 * most JavaScript validators), and the non-backtracking engines of Go (RE2) and Rust, which
 * refuse what they cannot run in linear time or do not know, and some validators then drop
 * the pattern silently. The npm `re2` binding needs a native build, so this checks the syntax
 * instead, as a whitelist: anything outside it is reported, even where one engine would take it.
 *
 * Allowed: literals; `.`; classes `[...]` / `[^...]` with ranges; `(...)` and `(?:...)`;
 * `|`; `* + ?` and `{n}` `{n,}` `{n,m}` with n, m at most 1000 (RE2's limit); anchors `^ $`;
 * escapes `\xHH` and of the syntax characters `^ $ \ . * + ? ( ) [ ] { } |` (`-` in a class).
 * Refused: lookaround and every other `(?...)`; backreferences; `\d \w \s \b`, `\p{...}`,
 * `\uHHHH` (RE2 has no `\u`; a surrogate `\uD800` is refused by RE2 and Rust alike); in a class
 * an unescaped `[` and `&&` `--` `~~` (Rust's class set operators).
 */

// Not `/`: Rust's regex before 1.8 refuses `\/` (and no engine needs it escaped).
const SYNTAX = new Set([...'^$\\.*+?()[]{}|'])
const MAX_REPEAT = 1000

export function portabilityProblems(pattern: string): string[] {
  const problems: string[] = []
  try {
    new RegExp(pattern, 'u')
  } catch (e) {
    problems.push(`does not compile with the u flag: ${(e as Error).message}`)
  }
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      if (next === 'x') {
        if (!/^[0-9A-Fa-f]{2}$/.test(pattern.slice(i + 2, i + 4))) problems.push(`at ${i}: \\x needs two hex digits`)
        i += 3
      } else if (next === 'u' && /^[dD][89a-fA-F]/.test(pattern.slice(i + 2, i + 4))) {
        problems.push(`at ${i}: a surrogate escape \\${pattern.slice(i + 1, i + 6)}`)
        i += 5
      } else if (/[1-9]/.test(next) || next === 'k') {
        problems.push(`at ${i}: a backreference \\${next}`)
        i++
      } else if (SYNTAX.has(next) || (inClass && next === '-')) {
        i++
      } else {
        problems.push(`at ${i}: the escape \\${next} is not portable`)
        i++
      }
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      else if (c === '[') problems.push(`at ${i}: an unescaped [ inside a class`)
      else if ((c === '&' || c === '-' || c === '~') && pattern[i + 1] === c) problems.push(`at ${i}: ${c}${c} inside a class`)
      continue
    }
    if (c === '[') {
      inClass = true
      // A leading ] or ^] would be a literal in some engines and an empty class in others.
      if (pattern[i + 1] === ']' || pattern.slice(i + 1, i + 3) === '^]') problems.push(`at ${i}: a class starting with ]`)
      if (pattern[i + 1] === '^') i++
      continue
    }
    if (c === '(' && pattern[i + 1] === '?') {
      if (pattern[i + 2] === ':') i += 2
      else problems.push(`at ${i}: (?${pattern[i + 2] ?? ''}... (lookaround, a named group or flags) is not portable`)
      continue
    }
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i))
      if (m === null) {
        problems.push(`at ${i}: a { that is not a repetition`)
        continue
      }
      for (const n of [m[1], m[2]]) if (n !== undefined && n !== '' && Number(n) > MAX_REPEAT) problems.push(`at ${i}: repetition ${m[0]} over ${MAX_REPEAT}`)
      i += m[0].length - 1
    }
  }
  if (inClass) problems.push('an unterminated class')
  return problems
}

/** Every `pattern` of a JSON document, with its JSON pointer. */
export function patternsOf(node: unknown, pointer: readonly string[] = []): Array<{ pointer: string; pattern: string }> {
  if (Array.isArray(node)) return node.flatMap((v, i) => patternsOf(v, [...pointer, String(i)]))
  if (typeof node !== 'object' || node === null) return []
  const out: Array<{ pointer: string; pattern: string }> = []
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' && typeof v === 'string') out.push({ pointer: `/${pointer.join('/')}`, pattern: v })
    else out.push(...patternsOf(v, [...pointer, k]))
  }
  return out
}
