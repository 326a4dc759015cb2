/** `<Answer>`: answers the call if it is not answered yet (mod_dptools `answer`). */
import type { ElementBase } from '../syntax/types.js'
import { NEXT, type ElementModule } from './types.js'

export interface Answer extends ElementBase {
  readonly type: 'Answer'
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Answer: Answer
  }
}

export const answer: ElementModule<Answer> = {
  name: 'Answer',
  attributes: [],
  parse(node, ctx) {
    ctx.empty(node)
    return { type: 'Answer', pos: node.pos }
  },
  async run(_el, ctx) {
    const r = await ctx.answer()
    return r.ok ? NEXT : r.error
  },
}
