/**
 * `<SetErrorHandler>Section</SetErrorHandler>`: from now on a runtime error (missing file,
 * failed fetch, a template that gives a wrong value...) continues in that Section instead of
 * ending the call. The handler belongs to the document: a new document starts without one.
 */
import type { ElementBase, Param } from '../syntax/types.js'
import { sectionText } from './goto.js'
import { NEXT, runtimeError, type ElementModule } from './types.js'

export interface SetErrorHandler extends ElementBase {
  readonly type: 'SetErrorHandler'
  readonly section: Param<string>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    SetErrorHandler: SetErrorHandler
  }
}

export const setErrorHandler: ElementModule<SetErrorHandler> = {
  name: 'SetErrorHandler',
  attributes: [],
  parse(node, ctx) {
    return { type: 'SetErrorHandler', pos: node.pos, section: sectionText(node, ctx) }
  },
  async run(el, ctx) {
    const name = ctx.value(el.section)
    if (!name.ok) return name.error
    if (!ctx.document.sections.has(name.value)) return runtimeError(`SetErrorHandler: there is no Section named ${JSON.stringify(name.value)}`)
    ctx.setErrorHandler(name.value)
    return NEXT
  },
}
