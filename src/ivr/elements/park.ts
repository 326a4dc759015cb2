/**
 * `<Park timeout>`: the call waits, parked, for up to `timeout` seconds, with music on hold
 * once it is answered; then it is hung up. The channel already sits in FreeSWITCH's park loop
 * (our dialplan parked it to hand it to the runner, and applications run from inside that
 * loop), and `park` cannot be run again on it ("Cannot park channels that are under control
 * already", switch_ivr.c switch_ivr_park), nor is `park_timeout` read after the loop started.
 * So the runner keeps the time itself and plays `endless_playback local_stream://moh` (the
 * vanilla configuration's hold_music) meanwhile.
 *
 * A parked call may be picked up by someone else (uuid_bridge from CTI): when the channel was
 * bridged during the Park, the timeout does not hang it up and the session just ends.
 */
import { app } from '../../pbx/commands.js'
import * as C from '../syntax/checks.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { EXEC_TIMEOUT_MS, GONE, type ElementModule } from './types.js'

export interface Park extends ElementBase {
  readonly type: 'Park'
  /** 1-86400 seconds, default 21600. */
  readonly timeout: Param<number>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Park: Park
  }
}

const TIMEOUT = C.intIn(1, 86400)

const HOLD_MUSIC = 'local_stream://moh'

export const park: ElementModule<Park> = {
  name: 'Park',
  attributes: ['timeout'],
  parse(node, ctx) {
    ctx.empty(node)
    return { type: 'Park', pos: node.pos, timeout: ctx.attr(node, 'timeout', TIMEOUT, 21600) }
  },
  async run(el, ctx) {
    const timeout = ctx.value(el.timeout)
    if (!timeout.ok) return timeout.error
    const bridgesBefore = ctx.bridges()
    if (ctx.isAnswered()) {
      // Not awaited: the music plays until the hangup (or a pick-up) interrupts it.
      void ctx.exec(app('endless_playback', HOLD_MUSIC), timeout.value * 1000 + EXEC_TIMEOUT_MS.short).then((r) => {
        if (!r.ok && r.error.kind === 'error') ctx.log.warn({ reason: r.error.message }, 'ivr Park: no music on hold')
      })
    }
    const expired = await ctx.sleep(timeout.value * 1000)
    if (!expired) return GONE
    if (ctx.bridges() > bridgesBefore) return { kind: 'end', hangup: false, reason: 'Park: the call was picked up' }
    return { kind: 'end', hangup: true, reason: `Park timeout (${timeout.value} s)` }
  },
}
