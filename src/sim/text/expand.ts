/**
 * `${...}` expansion as switch_channel_expand_variables / switch_event_expand_headers do it
 * (switch_channel.c): `${name}` is the channel variable (else the global one, else empty),
 * `${api(args)}` runs the API command `api` with the expanded `args` and inserts its output
 * (how a directory dial-string calls `${sofia_contact(...)}`), `$${name}` is a global variable.
 * Nested `${...}` inside a name or an argument are expanded first. A `\$` stays a literal `$`.
 */
export interface ExpandContext {
  readonly variable: (name: string) => string | undefined
  readonly global: (name: string) => string | undefined
  readonly api: (command: string, arg: string) => string
}

/** Index of the `}` closing the `{` at `open`, honouring nesting; -1 when unbalanced. */
function closingBrace(s: string, open: number): number {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    if (s[i] === '{') depth++
    else if (s[i] === '}') {
      depth--
      if (depth === 0) return i
    }
  }
  return -1
}

export function expandVariables(text: string, ctx: ExpandContext, depth = 0): string {
  if (!text.includes('$') || depth > 16) return text
  let out = ''
  let i = 0
  while (i < text.length) {
    const ch = text[i]
    if (ch === '\\' && text[i + 1] === '$') {
      out += '$'
      i += 2
      continue
    }
    const isGlobal = ch === '$' && text[i + 1] === '$' && text[i + 2] === '{'
    if ((ch === '$' && text[i + 1] === '{') || isGlobal) {
      const open = isGlobal ? i + 2 : i + 1
      const close = closingBrace(text, open)
      if (close < 0) {
        out += text.slice(i)
        break
      }
      const inner = expandVariables(text.slice(open + 1, close), ctx, depth + 1)
      out += isGlobal ? (ctx.global(inner) ?? '') : resolve(inner, ctx)
      i = close + 1
      continue
    }
    out += ch
    i++
  }
  return out
}

function resolve(inner: string, ctx: ExpandContext): string {
  const call = /^([A-Za-z0-9_]+)\((.*)\)$/s.exec(inner)
  if (call !== null) return ctx.api(call[1] as string, call[2] as string)
  return ctx.variable(inner) ?? ctx.global(inner) ?? ''
}
