/** `<If expr>`: the `<Then>` elements when the expression is true (Python truthiness), else the `<Else>` ones. */
import { fail } from '../syntax/reader.js'
import type { ElementBase, IvrElement, ParsedExpr } from '../syntax/types.js'
import { truthy } from '../expr/value.js'
import type { ElementModule } from './types.js'

export interface If extends ElementBase {
  readonly type: 'If'
  readonly expr: ParsedExpr
  readonly then: readonly IvrElement[]
  /** [] when there is no <Else>. */
  readonly else: readonly IvrElement[]
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    If: If
  }
}

export const ifElement: ElementModule<If> = {
  name: 'If',
  attributes: ['expr'],
  branches: { Then: [], Else: [] },
  parse(node, ctx) {
    const expr = ctx.expr(node)
    const kids = ctx.branches(node, ['Then', 'Else'])
    const thens = kids.filter((k) => k.el.name === 'Then')
    const elses = kids.filter((k) => k.el.name === 'Else')
    const then = thens[0]
    if (then === undefined || thens.length !== 1) return fail(node.pos, `<If> needs exactly one <Then>, found ${thens.length}`)
    if (elses.length > 1) fail(node.pos, '<If> may have only one <Else>')
    if (kids[0]?.el.name !== 'Then') fail(node.pos, '<Then> must come before <Else>')
    return {
      type: 'If',
      pos: node.pos,
      expr,
      then: ctx.body(then),
      else: elses[0] ? ctx.body(elses[0]) : [],
    }
  },
  async run(el, ctx) {
    const v = ctx.evaluate(el.expr)
    if (!v.ok) return v.error
    return ctx.runBlock(truthy(v.value) ? el.then : el.else)
  },
}
