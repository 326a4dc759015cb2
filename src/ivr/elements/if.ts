/** `<If expr>`: the `<Then>` elements when the expression is true (Python truthiness), else the `<Else>` ones. */
import { truthy } from '../expr/value.js'
import type { If } from '../document/types.js'
import type { ElementModule } from './types.js'

export const ifElement: ElementModule<If> = {
  name: 'If',
  async run(el, ctx) {
    const v = ctx.evaluate(el.expr)
    if (!v.ok) return v.error
    return ctx.runBlock(truthy(v.value) ? el.then : el.else)
  },
}
