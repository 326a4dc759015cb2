/** `<Switch expr>`: the first `<Case val>` equal to str() of the value, else `<Default>`. */
import { toText } from '../expr/value.js'
import type { Switch } from '../document/types.js'
import type { ElementModule } from './types.js'

export const switchElement: ElementModule<Switch> = {
  name: 'Switch',
  async run(el, ctx) {
    const v = ctx.evaluate(el.expr)
    if (!v.ok) return v.error
    const text = toText(v.value)
    for (const c of el.cases) {
      const val = ctx.value(c.val)
      if (!val.ok) return val.error
      if (val.value === text) return ctx.runBlock(c.body)
    }
    return ctx.runBlock(el.default)
  },
}
