/** The syntax tree of an IVR expression (built by parse.ts, walked by evaluate.ts). */
import type { Value } from './value.js'

export const FUNCTIONS = {
  str: 1,
  int: 1,
  float: 1,
  len: 1,
  hour: 0,
  minute: 0,
  weekday: 0,
  date: 0,
} as const

export type FunctionName = keyof typeof FUNCTIONS

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%' | '**'
/** `GT GE LT LE` are parsed to `> >= < <=`: the word and the symbol mean the same. */
export type ComparisonOp = '==' | '!=' | '>' | '>=' | '<' | '<=' | 'in' | 'not in'

export type Expr =
  | { readonly kind: 'literal'; readonly value: Value }
  | { readonly kind: 'list'; readonly items: readonly Expr[] }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'member'; readonly object: Expr; readonly name: string }
  | { readonly kind: 'index'; readonly object: Expr; readonly index: Expr }
  | { readonly kind: 'call'; readonly fn: FunctionName; readonly args: readonly Expr[] }
  | { readonly kind: 'negate'; readonly operand: Expr }
  | { readonly kind: 'plus'; readonly operand: Expr }
  | { readonly kind: 'not'; readonly operand: Expr }
  | { readonly kind: 'arith'; readonly op: ArithmeticOp; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'compare'; readonly op: ComparisonOp; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'and' | 'or'; readonly left: Expr; readonly right: Expr }

export const isFunctionName = (name: string): name is FunctionName => Object.hasOwn(FUNCTIONS, name)
