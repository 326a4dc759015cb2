/**
 * `<Hangup reason>`: ends the call with `uuid_kill <uuid> <cause>`: rejected → CALL_REJECTED,
 * busy → USER_BUSY, none → NORMAL_CLEARING. On a call not answered yet this is a rejection
 * (mod_sofia answers an unanswered INVITE with the cause's SIP status: 603 for CALL_REJECTED,
 * 486 for USER_BUSY); nothing here answers first.
 */
import * as C from '../syntax/checks.js'
import type { ElementBase, Param } from '../syntax/types.js'
import type { ElementModule } from './types.js'

export type HangupReason = 'rejected' | 'busy'

export interface Hangup extends ElementBase {
  readonly type: 'Hangup'
  /** Absent: normal clearing. */
  readonly reason: Param<HangupReason> | undefined
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Hangup: Hangup
  }
}

const REASON = C.oneOf<HangupReason>(['rejected', 'busy'])

const HANGUP_CAUSES: Readonly<Record<HangupReason, string>> = {
  rejected: 'CALL_REJECTED',
  busy: 'USER_BUSY',
}

export const hangup: ElementModule<Hangup> = {
  name: 'Hangup',
  attributes: ['reason'],
  parse(node, ctx) {
    ctx.empty(node)
    return { type: 'Hangup', pos: node.pos, reason: ctx.optionalAttr(node, 'reason', REASON) }
  },
  async run(el, ctx) {
    const reason = ctx.optional(el.reason)
    if (!reason.ok) return reason.error
    const cause = reason.value === undefined ? 'NORMAL_CLEARING' : HANGUP_CAUSES[reason.value]
    await ctx.hangup(cause)
    return { kind: 'end', hangup: false, reason: `Hangup ${cause}` }
  },
}
