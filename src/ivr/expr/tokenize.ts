/**
 * Splits an expression into tokens. Positions are 1-based columns so that an error message
 * points at the character an author typed.
 */
import { err, ok, type Result } from '../../util/result.js'

export type Token =
  | { readonly kind: 'number'; readonly value: number; readonly col: number }
  | { readonly kind: 'string'; readonly value: string; readonly col: number }
  | { readonly kind: 'name'; readonly value: string; readonly col: number }
  | { readonly kind: 'op'; readonly value: string; readonly col: number }
  | { readonly kind: 'end'; readonly col: number }

/** Longest first, so that `**` is not read as two `*` and `>=` not as `>` then `=`. */
const OPERATORS = ['**', '==', '!=', '>=', '<=', '+', '-', '*', '/', '%', '>', '<', '(', ')', '[', ']', ',', '.']

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9'
const isNameStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z_]/.test(c)
const isNameChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c)

export function tokenize(src: string): Result<Token[], string> {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]
    const col = i + 1
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
      continue
    }
    if (isDigit(c)) {
      let j = i
      while (isDigit(src[j])) j++
      // A fraction needs digits after the point, so `1.` is an error rather than a silent 1.
      if (src[j] === '.' && isDigit(src[j + 1])) {
        j++
        while (isDigit(src[j])) j++
      }
      if (isNameChar(src[j])) return err(`bad number at column ${col}`)
      tokens.push({ kind: 'number', value: Number(src.slice(i, j)), col })
      i = j
      continue
    }
    if (isNameStart(c)) {
      let j = i
      while (isNameChar(src[j])) j++
      tokens.push({ kind: 'name', value: src.slice(i, j), col })
      i = j
      continue
    }
    if (c === "'") {
      let j = i + 1
      let value = ''
      for (;;) {
        const d = src[j]
        if (d === undefined) return err(`unterminated string starting at column ${col}`)
        if (d === "'") break
        if (d === '\\') {
          const e = src[j + 1]
          if (e !== "'" && e !== '\\') return err(`unknown escape \\${e ?? ''} at column ${j + 1} (only \\' and \\\\)`)
          value += e
          j += 2
          continue
        }
        value += d
        j++
      }
      tokens.push({ kind: 'string', value, col })
      i = j + 1
      continue
    }
    if (c === '"') return err(`strings use single quotes ('...'), found " at column ${col}`)
    const op = OPERATORS.find((o) => src.startsWith(o, i))
    if (op === undefined) {
      if (c === '=') return err(`unexpected = at column ${col} (compare with ==)`)
      if (c === '&' || c === '|' || c === '!') return err(`unexpected ${c} at column ${col} (use and, or, not)`)
      return err(`unexpected character ${JSON.stringify(c)} at column ${col}`)
    }
    tokens.push({ kind: 'op', value: op, col })
    i += op.length
  }
  tokens.push({ kind: 'end', col: src.length + 1 })
  return ok(tokens)
}
