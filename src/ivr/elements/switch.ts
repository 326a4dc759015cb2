/** `<Switch expr>`: the first `<Case val>` equal to str() of the value, else `<Default>`. */
import * as C from '../syntax/checks.js'
import { quote } from '../syntax/params.js'
import { fail } from '../syntax/reader.js'
import type { ElementBase, IvrElement, Param, ParsedExpr, SourcePos } from '../syntax/types.js'
import { toText } from '../expr/value.js'
import type { ElementModule } from './types.js'

export interface SwitchCase {
  readonly pos: SourcePos
  /** Compared with str() of the Switch value. */
  readonly val: Param<string>
  readonly body: readonly IvrElement[]
}

export interface Switch extends ElementBase {
  readonly type: 'Switch'
  readonly expr: ParsedExpr
  readonly cases: readonly SwitchCase[]
  /** [] when there is no <Default>. */
  readonly default: readonly IvrElement[]
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Switch: Switch
  }
}

export const switchElement: ElementModule<Switch> = {
  name: 'Switch',
  attributes: ['expr'],
  branches: { Case: ['val'], Default: [] },
  parse(node, ctx) {
    const expr = ctx.expr(node)
    const kids = ctx.branches(node, ['Case', 'Default'])
    if (kids.length === 0) fail(node.pos, '<Switch> needs at least one <Case>')
    const cases: SwitchCase[] = []
    const seen = new Set<string>()
    let dflt: IvrElement[] = []
    kids.forEach((k, i) => {
      if (k.el.name === 'Default') {
        if (i !== kids.length - 1) fail(k.pos, '<Default> must be the last child of <Switch>')
        dflt = ctx.body(k)
        return
      }
      const val = ctx.requiredAttr(k, 'val', C.text(true))
      if (val.kind === 'literal') {
        if (seen.has(val.value)) fail(k.pos, `a <Case> with val ${quote(val.value)} is already in this <Switch>`)
        seen.add(val.value)
      }
      cases.push({ pos: k.pos, val, body: ctx.body(k) })
    })
    return { type: 'Switch', pos: node.pos, expr, cases, default: dflt }
  },
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
