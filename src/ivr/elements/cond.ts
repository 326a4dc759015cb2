/** `<Cond>`: the first `<Clause expr>` whose expression is true, else `<Else>`. Later clauses are not evaluated. */
import { fail } from '../syntax/reader.js'
import type { ElementBase, IvrElement, ParsedExpr, SourcePos } from '../syntax/types.js'
import { truthy } from '../expr/value.js'
import type { ElementModule } from './types.js'

export interface CondClause {
  readonly pos: SourcePos
  readonly expr: ParsedExpr
  readonly body: readonly IvrElement[]
}

export interface Cond extends ElementBase {
  readonly type: 'Cond'
  readonly clauses: readonly CondClause[]
  /** [] when there is no <Else>. */
  readonly else: readonly IvrElement[]
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Cond: Cond
  }
}

export const cond: ElementModule<Cond> = {
  name: 'Cond',
  attributes: [],
  branches: { Clause: ['expr'], Else: [] },
  parse(node, ctx) {
    const kids = ctx.branches(node, ['Clause', 'Else'])
    const clauses: CondClause[] = []
    let otherwise: IvrElement[] = []
    kids.forEach((k, i) => {
      if (k.el.name === 'Else') {
        if (i !== kids.length - 1) fail(k.pos, '<Else> must be the last child of <Cond>')
        otherwise = ctx.body(k)
        return
      }
      clauses.push({ pos: k.pos, expr: ctx.expr(k), body: ctx.body(k) })
    })
    if (clauses.length === 0) fail(node.pos, '<Cond> needs at least one <Clause>')
    return { type: 'Cond', pos: node.pos, clauses, else: otherwise }
  },
  async run(el, ctx) {
    for (const clause of el.clauses) {
      const v = ctx.evaluate(clause.expr)
      if (!v.ok) return v.error
      if (truthy(v.value)) return ctx.runBlock(clause.body)
    }
    return ctx.runBlock(el.else)
  },
}
