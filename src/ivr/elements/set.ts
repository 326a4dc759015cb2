/** `<Set var val|expr>`: `val` is text (templates rendered), `expr` an expression's value (any type). */
import type { SetVar } from '../document/types.js'
import { NEXT, type ElementModule } from './types.js'

export const set: ElementModule<SetVar> = {
  name: 'Set',
  async run(el, ctx) {
    const v = el.value.kind === 'val' ? ctx.value(el.value.val) : ctx.evaluate(el.value.expr)
    if (!v.ok) return v.error
    ctx.setVariable(el.var, v.value)
    return NEXT
  },
}
