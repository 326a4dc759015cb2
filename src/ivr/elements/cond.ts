/** `<Cond>`: the first `<Clause expr>` whose expression is true, else `<Else>`. Later clauses are not evaluated. */
import { truthy } from '../expr/value.js'
import type { Cond } from '../document/types.js'
import type { ElementModule } from './types.js'

export const cond: ElementModule<Cond> = {
  name: 'Cond',
  async run(el, ctx) {
    for (const clause of el.clauses) {
      const v = ctx.evaluate(clause.expr)
      if (!v.ok) return v.error
      if (truthy(v.value)) return ctx.runBlock(clause.body)
    }
    return ctx.runBlock(el.else)
  },
}
