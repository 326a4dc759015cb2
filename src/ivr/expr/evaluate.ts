/**
 * Evaluates an expression tree against the call's variables. Our own interpreter over plain
 * data: no eval/Function, and names are looked up only among own properties of plain objects
 * (Object.hasOwn), so `__proto__`, `constructor` or `toString` are just names that are not set.
 *
 * Semantics (docs/ivr.md, "Expressions"): Python-like and without coercion. A name or member
 * that is not set is null; `+` adds two numbers, joins two strings or two lists and refuses
 * anything else (`'1' + 1` is an error: use str() or int()); `- * / % **` take numbers only;
 * ordering compares two numbers or two strings; `==` never converts; `and`/`or` return the
 * deciding operand. A runtime error (division by zero, a wrong type) is an error value, never
 * an exception.
 */
import { err, ok, type Result } from '../../util/result.js'
import type { ArithmeticOp, ComparisonOp, Expr, FunctionName } from './ast.js'
import { clockParts } from './time.js'
import { isPlainObject, toText, truthy, typeName, valuesEqual, type Value } from './value.js'

/**
 * The variables an expression can read. A Map is the natural choice; a plain object works too
 * (only its own properties are visible).
 */
export type Scope = ReadonlyMap<string, Value> | { readonly [name: string]: Value }

export interface EvalEnv {
  /** IANA zone of the domain, for hour(), minute(), weekday() and date(). */
  readonly timeZone: string
  /** Injectable so that time-of-day routing can be tested with a fixed clock. */
  readonly now: () => Date
}

/** Longest string an expression may build (by `+` or `str()`), in UTF-16 code units. */
export const MAX_STRING_LENGTH = 65536
/**
 * Longest list an expression may build by `+`.
 * @internal Exported for tests: test/ivr/expr builds lists past it.
 */
export const MAX_LIST_LENGTH = 10000

class EvalError {
  constructor(readonly message: string) {}
}

const fail = (message: string): never => {
  throw new EvalError(message)
}

export function evaluate(expr: Expr, scope: Scope, env: EvalEnv): Result<Value, string> {
  try {
    return ok(new Evaluator(scope, env).eval(expr))
  } catch (e) {
    if (e instanceof EvalError) return err(e.message)
    // Deeply nested data (a GetJSON answer) can exhaust the stack in equality or str():
    // that is the document's problem, reported like any other runtime error.
    if (e instanceof RangeError) return err(`expression could not be evaluated: ${e.message}`)
    throw e
  }
}

/** Reads a variable. Missing names (and prototype names) are null. */
function lookup(scope: Scope, name: string): Value {
  if (scope instanceof Map) return (scope.get(name) as Value | undefined) ?? null
  const s = scope as { readonly [name: string]: Value }
  return Object.hasOwn(s, name) ? (s[name] ?? null) : null
}

function member(object: Value, name: string): Value {
  return isPlainObject(object) && Object.hasOwn(object, name) ? (object[name] ?? null) : null
}

function checkString(s: string): string {
  if (s.length > MAX_STRING_LENGTH) fail(`string longer than ${MAX_STRING_LENGTH} characters`)
  return s
}

function checkNumber(n: number): number {
  if (!Number.isFinite(n)) fail('result is not a finite number')
  return n
}

function codePoints(s: string): string[] {
  return Array.from(s)
}

function index(object: Value, i: Value): Value {
  if (object === null) return null
  if (Array.isArray(object) || typeof object === 'string') {
    if (typeof i !== 'number' || !Number.isInteger(i)) {
      return fail(`${typeName(object)} index must be a whole number, got ${typeName(i)}`)
    }
    const items: readonly Value[] = typeof object === 'string' ? codePoints(object) : object
    const at = i < 0 ? items.length + i : i
    return at >= 0 && at < items.length ? (items[at] ?? null) : null
  }
  if (isPlainObject(object)) {
    if (typeof i !== 'string') return fail(`object key must be a string, got ${typeName(i)}`)
    return member(object, i)
  }
  return fail(`cannot index ${typeName(object)}`)
}

function arith(op: ArithmeticOp, a: Value, b: Value): Value {
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') return checkString(a + b)
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length + b.length > MAX_LIST_LENGTH) fail(`list longer than ${MAX_LIST_LENGTH} items`)
      return [...a, ...b]
    }
  }
  if (typeof a !== 'number' || typeof b !== 'number') {
    const hint = op === '+' ? ' (convert with str(), int() or float())' : ''
    return fail(`cannot apply ${op} to ${typeName(a)} and ${typeName(b)}${hint}`)
  }
  switch (op) {
    case '+':
      return checkNumber(a + b)
    case '-':
      return checkNumber(a - b)
    case '*':
      return checkNumber(a * b)
    case '/':
      if (b === 0) fail('division by zero')
      return checkNumber(a / b)
    case '%': {
      if (b === 0) fail('modulo by zero')
      // Python's %: the result has the sign of the divisor (-1 % 3 == 2).
      let r = a % b
      if (r !== 0 && r < 0 !== b < 0) r += b
      return checkNumber(r)
    }
    case '**':
      if (a === 0 && b < 0) fail('division by zero (0 to a negative power)')
      return checkNumber(a ** b)
  }
}

function compare(op: ComparisonOp, a: Value, b: Value): boolean {
  switch (op) {
    case '==':
      return valuesEqual(a, b)
    case '!=':
      return !valuesEqual(a, b)
    case 'in':
      return contains(b, a)
    case 'not in':
      return !contains(b, a)
  }
  const bothNumbers = typeof a === 'number' && typeof b === 'number'
  const bothStrings = typeof a === 'string' && typeof b === 'string'
  if (!bothNumbers && !bothStrings) {
    fail(`cannot order ${typeName(a)} and ${typeName(b)} with ${op} (convert with int() or str())`)
  }
  const x = a as number | string
  const y = b as number | string
  switch (op) {
    case '>':
      return x > y
    case '>=':
      return x >= y
    case '<':
      return x < y
    case '<=':
      return x <= y
  }
}

function contains(container: Value, item: Value): boolean {
  if (container === null) return false // nothing is in a missing value
  if (typeof container === 'string') {
    if (typeof item !== 'string') return fail(`'in' a string needs a string on the left, got ${typeName(item)}`)
    return container.includes(item)
  }
  if (Array.isArray(container)) return container.some((x) => valuesEqual(x, item))
  if (isPlainObject(container)) return typeof item === 'string' && Object.hasOwn(container, item)
  return fail(`cannot use 'in' with ${typeName(container)} on the right`)
}

const INT_RE = /^\s*[+-]?\d+\s*$/
const FLOAT_RE = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/

function toInt(v: Value): number {
  if (typeof v === 'number') return Math.trunc(v) + 0 // + 0 turns -0 into 0
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'string' && INT_RE.test(v)) return checkNumber(Number(v))
  return fail(`int() cannot convert ${describeValue(v)}`)
}

function toFloat(v: Value): number {
  if (typeof v === 'number') return v
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'string' && FLOAT_RE.test(v)) return checkNumber(Number(v))
  return fail(`float() cannot convert ${describeValue(v)}`)
}

function describeValue(v: Value): string {
  if (typeof v === 'string') return `'${v.length > 32 ? `${v.slice(0, 32)}...` : v}'`
  return typeName(v)
}

function len(v: Value): number {
  if (typeof v === 'string') {
    let n = 0
    for (const _ of v) n++
    return n
  }
  if (Array.isArray(v)) return v.length
  if (isPlainObject(v)) return Object.keys(v).length
  return fail(`len() of ${typeName(v)}`)
}

class Evaluator {
  constructor(
    private readonly scope: Scope,
    private readonly env: EvalEnv,
  ) {}

  eval(e: Expr): Value {
    switch (e.kind) {
      case 'literal':
        return e.value
      case 'list':
        return e.items.map((x) => this.eval(x))
      case 'name':
        return lookup(this.scope, e.name)
      case 'member':
        return member(this.eval(e.object), e.name)
      case 'index':
        return index(this.eval(e.object), this.eval(e.index))
      case 'call':
        return this.call(e.fn, e.args.map((x) => this.eval(x)))
      case 'negate':
      case 'plus': {
        const v = this.eval(e.operand)
        if (typeof v !== 'number') return fail(`unary ${e.kind === 'negate' ? '-' : '+'} needs a number, got ${typeName(v)}`)
        return e.kind === 'negate' ? 0 - v : v
      }
      case 'not':
        return !truthy(this.eval(e.operand))
      case 'and': {
        const left = this.eval(e.left)
        return truthy(left) ? this.eval(e.right) : left
      }
      case 'or': {
        const left = this.eval(e.left)
        return truthy(left) ? left : this.eval(e.right)
      }
      case 'arith':
        return arith(e.op, this.eval(e.left), this.eval(e.right))
      case 'compare':
        return compare(e.op, this.eval(e.left), this.eval(e.right))
    }
  }

  private call(fn: FunctionName, args: Value[]): Value {
    const a = args[0] ?? null
    switch (fn) {
      case 'str':
        return checkString(toText(a))
      case 'int':
        return toInt(a)
      case 'float':
        return toFloat(a)
      case 'len':
        return len(a)
      case 'hour':
      case 'minute':
      case 'weekday':
      case 'date': {
        const parts = clockParts(this.env.now(), this.env.timeZone)
        if (!parts.ok) return fail(`${fn}(): ${parts.error}`)
        return parts.value[fn]
      }
    }
  }
}
