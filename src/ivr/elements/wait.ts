/**
 * `<Wait length>`: silence for `length` seconds (fractions allowed) with mod_dptools `sleep
 * <ms>`. Silence needs media, so an unanswered call is answered first (ivr-xml.md: "as the
 * first element it answers first").
 */
import { app } from '../../pbx/commands.js'
import type { Wait } from '../document/types.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementModule } from './types.js'

export const wait: ElementModule<Wait> = {
  name: 'Wait',
  async run(el, ctx) {
    const length = ctx.value(el.length)
    if (!length.ok) return length.error
    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    const ms = Math.round(length.value * 1000)
    if (ms <= 0) return NEXT
    const done = await ctx.exec(app('sleep', String(ms)), ms + EXEC_TIMEOUT_MS.short)
    return done.ok ? NEXT : done.error
  },
}
