/**
 * `<GoTo>Section</GoTo>`: execution continues in that Section (a jump: when the Section ends,
 * the document ends). A literal name was checked at validation; a templated one is checked here.
 */
import * as C from '../syntax/checks.js'
import type { ElementNode, ParseContext } from '../syntax/reader.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { runtimeError, type ElementModule } from './types.js'

export interface GoTo extends ElementBase {
  readonly type: 'GoTo'
  /** A Section name; checked to exist at validation when literal. */
  readonly section: Param<string>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GoTo: GoTo
  }
}

/** The text of GoTo and SetErrorHandler: a Section name, checked to exist when written literally. */
export function sectionText(node: ElementNode, ctx: ParseContext): Param<string> {
  const section = ctx.textValue(node, 'the name of a Section', C.sectionName)
  if (section.kind === 'literal') ctx.sectionRef(section.value, node.pos, node.el.name)
  return section
}

export const goTo: ElementModule<GoTo> = {
  name: 'GoTo',
  attributes: [],
  parse(node, ctx) {
    return { type: 'GoTo', pos: node.pos, section: sectionText(node, ctx) }
  },
  async run(el, ctx) {
    const name = ctx.value(el.section)
    if (!name.ok) return name.error
    if (!ctx.document.sections.has(name.value)) return runtimeError(`GoTo: there is no Section named ${JSON.stringify(name.value)}`)
    return { kind: 'goto', section: name.value }
  },
}
