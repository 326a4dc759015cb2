/**
 * `<Wait length>`: silence for `length` seconds (fractions allowed) with mod_dptools `sleep
 * <ms>`. Silence needs media, so an unanswered call is answered first (docs/ivr.md "Wait": "as
 * the first element of a document it answers the call first").
 */
import { app } from '../../pbx/commands.js'
import { ok } from '../../util/result.js'
import { secondsIn } from '../syntax/checks.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { silence } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, type PromptModule } from './types.js'

export interface Wait extends ElementBase {
  readonly type: 'Wait'
  /** Seconds, fractions allowed, 0-3600, default 1. */
  readonly length: Param<number>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Wait: Wait
  }
}

const LENGTH = secondsIn(0, 3600)

export const wait: PromptModule<Wait> = {
  name: 'Wait',
  attributes: ['length'],
  parse(node, ctx) {
    ctx.empty(node)
    return { type: 'Wait', pos: node.pos, length: ctx.attr(node, 'length', LENGTH, 1) }
  },
  files(el, ctx) {
    const length = ctx.value(el.length)
    if (!length.ok) return length
    return ok(length.value > 0 ? [silence(length.value * 1000)] : [])
  },
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
