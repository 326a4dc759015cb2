/** `<Set var val|expr>`: `val` is text (templates rendered), `expr` an expression's value (any type). */
import * as C from '../syntax/checks.js'
import { fail } from '../syntax/reader.js'
import type { ElementBase, Param, ParsedExpr } from '../syntax/types.js'
import { NEXT, type ElementModule } from './types.js'

export interface SetVar extends ElementBase {
  readonly type: 'Set'
  readonly var: string
  readonly value: { readonly kind: 'val'; readonly val: Param<string> } | { readonly kind: 'expr'; readonly expr: ParsedExpr }
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Set: SetVar
  }
}

export const set: ElementModule<SetVar> = {
  name: 'Set',
  attributes: ['var', 'val', 'expr'],
  parse(node, ctx) {
    ctx.empty(node)
    const name = ctx.varName(node)
    const val = node.attrs.get('val')
    const hasExpr = node.attrs.has('expr')
    if (val !== undefined && hasExpr) fail(node.pos, '<Set> takes either val or expr, not both')
    if (val === undefined && !hasExpr) fail(node.pos, '<Set> needs a val (text) or an expr (expression) attribute')
    const value =
      val !== undefined
        ? { kind: 'val' as const, val: ctx.value(node, 'Set val', val, C.text(true)) }
        : { kind: 'expr' as const, expr: ctx.expr(node) }
    return { type: 'Set', pos: node.pos, var: name, value }
  },
  async run(el, ctx) {
    const v = el.value.kind === 'val' ? ctx.value(el.value.val) : ctx.evaluate(el.value.expr)
    if (!v.ok) return v.error
    ctx.setVariable(el.var, v.value)
    return NEXT
  },
}
