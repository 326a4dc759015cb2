/** `<Answer>`: answers the call if it is not answered yet (mod_dptools `answer`). */
import type { Answer } from '../document/types.js'
import { NEXT, type ElementModule } from './types.js'

export const answer: ElementModule<Answer> = {
  name: 'Answer',
  async run(_el, ctx) {
    const r = await ctx.answer()
    return r.ok ? NEXT : r.error
  },
}
