/**
 * `<GoTo>Section</GoTo>`: execution continues in that Section (a jump: when the Section ends,
 * the document ends). A literal name was checked at validation; a templated one is checked here.
 */
import type { GoTo } from '../document/types.js'
import { runtimeError, type ElementModule } from './types.js'

export const goTo: ElementModule<GoTo> = {
  name: 'GoTo',
  async run(el, ctx) {
    const name = ctx.value(el.section)
    if (!name.ok) return name.error
    if (!ctx.document.sections.has(name.value)) return runtimeError(`GoTo: there is no Section named ${JSON.stringify(name.value)}`)
    return { kind: 'goto', section: name.value }
  },
}
