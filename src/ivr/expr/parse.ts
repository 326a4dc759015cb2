/**
 * Recursive-descent parser of IVR expressions. Precedence follows Python, lowest first:
 * `or`, `and`, `not`, comparisons (`== != > >= < <= GT GE LT LE in`, `not in`; not chainable),
 * `+ -`, `* / %`, unary `- +`, `**` (right-associative, binds tighter than a unary minus on
 * its left), then `.name`, `[index]` and calls of the built-in functions.
 * Everything is decided here so that a document with a bad expression is refused before the
 * call runs: unknown functions, wrong argument counts and case mistakes in word operators.
 */
import { err, ok, type Result } from '../../util/result.js'
import { FUNCTIONS, isFunctionName, type ComparisonOp, type Expr } from './ast.js'
import { tokenize, type Token } from './tokenize.js'

/**
 * Longest expression accepted, in characters.
 * @internal Exported for tests: test/ivr/expr writes an expression past it.
 */
export const MAX_EXPRESSION_LENGTH = 1024
/**
 * Deepest nesting of parentheses, brackets, calls and prefix operators.
 * @internal Exported for tests: test/ivr/expr nests up to it.
 */
export const MAX_EXPRESSION_NESTING = 32

/** Words that are operators or constants, so they cannot name a variable. Case-sensitive. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'and', 'or', 'not', 'in', 'GT', 'GE', 'LT', 'LE', 'true', 'false', 'null',
])

const WORD_COMPARISONS: Readonly<Record<string, ComparisonOp>> = { GT: '>', GE: '>=', LT: '<', LE: '<=' }
const SYMBOL_COMPARISONS: ReadonlySet<string> = new Set(['==', '!=', '>', '>=', '<', '<='])

class ParseError {
  constructor(readonly message: string) {}
}

export function parseExpression(src: string): Result<Expr, string> {
  if (src.length > MAX_EXPRESSION_LENGTH) return err(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`)
  const tokens = tokenize(src)
  if (!tokens.ok) return tokens
  const p = new Parser(tokens.value)
  try {
    if (p.peek().kind === 'end') return err('empty expression')
    const e = p.parseOr()
    const t = p.peek()
    if (t.kind !== 'end') p.fail(t, 'expected the end of the expression')
    return ok(e)
  } catch (e) {
    // Only our own ParseError is expected; anything else is a bug and must surface.
    if (e instanceof ParseError) return err(e.message)
    throw e
  }
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'the end of the expression'
    case 'string':
      return `string '${t.value}'`
    case 'number':
      return `number ${t.value}`
    default:
      return `'${t.value}'`
  }
}

/** A hint for the usual slip: a word operator written in the wrong case (`gt`, `AND`). */
function caseHint(t: Token): string {
  if (t.kind !== 'name') return ''
  const up = t.value.toUpperCase()
  const low = t.value.toLowerCase()
  if (up in WORD_COMPARISONS && t.value !== up) return ` (word operators are case-sensitive: write ${up})`
  if (['and', 'or', 'not', 'in', 'true', 'false', 'null'].includes(low) && t.value !== low) {
    return ` (word operators are case-sensitive: write ${low})`
  }
  return ''
}

class Parser {
  private pos = 0
  // parseOr counts a level and the whole expression is one parseOr: start below zero so that
  // only the nesting an author writes (parentheses, brackets, calls, prefix operators) counts.
  private depth = -1

  constructor(private readonly tokens: readonly Token[]) {}

  peek(offset = 0): Token {
    // The token list always ends with 'end', so clamping keeps peek total.
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)] as Token
  }

  private next(): Token {
    const t = this.peek()
    if (this.pos < this.tokens.length - 1) this.pos++
    return t
  }

  fail(t: Token, what: string): never {
    throw new ParseError(`${what} at column ${t.col}, found ${describe(t)}${caseHint(t)}`)
  }

  private isOp(value: string, offset = 0): boolean {
    const t = this.peek(offset)
    return t.kind === 'op' && t.value === value
  }

  private isWord(value: string, offset = 0): boolean {
    const t = this.peek(offset)
    return t.kind === 'name' && t.value === value
  }

  private expectOp(value: string, what: string): void {
    if (!this.isOp(value)) this.fail(this.peek(), what)
    this.next()
  }

  /** Bounds recursion: every construct that nests goes through here. */
  private nested<T>(f: () => T): T {
    if (++this.depth > MAX_EXPRESSION_NESTING) {
      throw new ParseError(`expression nested deeper than ${MAX_EXPRESSION_NESTING} levels at column ${this.peek().col}`)
    }
    try {
      return f()
    } finally {
      this.depth--
    }
  }

  parseOr(): Expr {
    return this.nested(() => {
      let left = this.parseAnd()
      while (this.isWord('or')) {
        this.next()
        left = { kind: 'or', left, right: this.parseAnd() }
      }
      return left
    })
  }

  private parseAnd(): Expr {
    let left = this.parseNot()
    while (this.isWord('and')) {
      this.next()
      left = { kind: 'and', left, right: this.parseNot() }
    }
    return left
  }

  private parseNot(): Expr {
    if (this.isWord('not')) {
      this.next()
      return this.nested(() => ({ kind: 'not', operand: this.parseNot() }))
    }
    return this.parseComparison()
  }

  private comparisonOp(): { op: ComparisonOp; width: number } | undefined {
    const t = this.peek()
    if (t.kind === 'op' && SYMBOL_COMPARISONS.has(t.value)) return { op: t.value as ComparisonOp, width: 1 }
    if (t.kind !== 'name') return undefined
    const word = WORD_COMPARISONS[t.value]
    if (word !== undefined && Object.hasOwn(WORD_COMPARISONS, t.value)) return { op: word, width: 1 }
    if (t.value === 'in') return { op: 'in', width: 1 }
    if (t.value === 'not' && this.isWord('in', 1)) return { op: 'not in', width: 2 }
    return undefined
  }

  private parseComparison(): Expr {
    const left = this.parseAdditive()
    const c = this.comparisonOp()
    if (c === undefined) return left
    for (let i = 0; i < c.width; i++) this.next()
    const right = this.parseAdditive()
    if (this.comparisonOp() !== undefined) {
      this.fail(this.peek(), 'comparisons cannot be chained (join them with and)')
    }
    return { kind: 'compare', op: c.op, left, right }
  }

  private parseAdditive(): Expr {
    let left = this.parseMultiplicative()
    for (;;) {
      const t = this.peek()
      if (t.kind !== 'op' || (t.value !== '+' && t.value !== '-')) return left
      this.next()
      left = { kind: 'arith', op: t.value, left, right: this.parseMultiplicative() }
    }
  }

  private parseMultiplicative(): Expr {
    let left = this.parseUnary()
    for (;;) {
      const t = this.peek()
      if (t.kind !== 'op' || (t.value !== '*' && t.value !== '/' && t.value !== '%')) return left
      this.next()
      left = { kind: 'arith', op: t.value, left, right: this.parseUnary() }
    }
  }

  private parseUnary(): Expr {
    if (this.isOp('-') || this.isOp('+')) {
      const minus = this.isOp('-')
      this.next()
      return this.nested(() => {
        const operand = this.parseUnary()
        return minus ? { kind: 'negate', operand } : { kind: 'plus', operand }
      })
    }
    return this.parsePower()
  }

  private parsePower(): Expr {
    const base = this.parsePostfix()
    if (!this.isOp('**')) return base
    this.next()
    // Right-associative, and the exponent may carry its own sign: 2 ** -1.
    return this.nested(() => ({ kind: 'arith', op: '**', left: base, right: this.parseUnary() }))
  }

  private parsePostfix(): Expr {
    let e = this.parsePrimary()
    for (;;) {
      if (this.isOp('.')) {
        this.next()
        const t = this.next()
        if (t.kind !== 'name') this.fail(t, 'expected a member name after .')
        e = { kind: 'member', object: e, name: t.value }
      } else if (this.isOp('[')) {
        this.next()
        const index = this.parseOr()
        this.expectOp(']', 'expected ]')
        e = { kind: 'index', object: e, index }
      } else if (this.isOp('(')) {
        this.fail(this.peek(), `only the functions ${Object.keys(FUNCTIONS).join(', ')} can be called`)
      } else {
        return e
      }
    }
  }

  private parsePrimary(): Expr {
    const t = this.next()
    switch (t.kind) {
      case 'number':
        return { kind: 'literal', value: t.value }
      case 'string':
        return { kind: 'literal', value: t.value }
      case 'end':
        return this.fail(t, 'expected a value')
      case 'name':
        return this.parseName(t)
      case 'op':
        if (t.value === '(') {
          const e = this.parseOr()
          this.expectOp(')', 'expected )')
          return e
        }
        if (t.value === '[') return this.parseList()
        return this.fail(t, 'expected a value')
    }
  }

  private parseName(t: Token & { kind: 'name' }): Expr {
    if (t.value === 'true') return { kind: 'literal', value: true }
    if (t.value === 'false') return { kind: 'literal', value: false }
    if (t.value === 'null') return { kind: 'literal', value: null }
    if (RESERVED_WORDS.has(t.value)) return this.fail(t, 'expected a value')
    if (!this.isOp('(')) return { kind: 'name', name: t.value }
    if (!isFunctionName(t.value)) {
      return this.fail(t, `unknown function ${t.value}() (functions: ${Object.keys(FUNCTIONS).join(', ')})`)
    }
    const fn = t.value
    this.next()
    const args: Expr[] = []
    if (!this.isOp(')')) {
      for (;;) {
        args.push(this.parseOr())
        if (!this.isOp(',')) break
        this.next()
      }
    }
    this.expectOp(')', `expected ) to close ${fn}(`)
    if (args.length !== FUNCTIONS[fn]) {
      const n = FUNCTIONS[fn]
      throw new ParseError(`${fn}() takes ${n} argument${n === 1 ? '' : 's'}, got ${args.length} (column ${t.col})`)
    }
    return { kind: 'call', fn, args }
  }

  private parseList(): Expr {
    const items: Expr[] = []
    if (!this.isOp(']')) {
      for (;;) {
        items.push(this.parseOr())
        if (!this.isOp(',')) break
        this.next()
        if (this.isOp(']')) break // a trailing comma, as Python allows
      }
    }
    this.expectOp(']', 'expected , or ] in the list')
    return { kind: 'list', items }
  }
}
