/**
 * Hanging up legs the engine no longer wants: one leg (uuid_kill: the loser of a fork, a leg
 * ringing past its time, a leg of an attempt already given up), or every leg of a request
 * (hupall on its cod_request_id: also those FreeSWITCH is creating right now).
 * Fire and forget: nothing waits on it; a failure is logged.
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import * as commands from '../pbx/commands.js'
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'

export interface LegCanceller {
  kill(uuid: string, cause?: string): void
  hangupRequest(requestId: string): void
}

export function createLegCanceller(pbx: PbxClient, commandTimeoutMs: number, log: Logger): LegCanceller {
  return {
    kill(uuid, cause = 'ORIGINATOR_CANCEL') {
      const cmd = commands.uuidKill(uuid, cause)
      if (!cmd.ok || !pbx.isConnected()) return
      void pbx.bgapi(cmd.value, commandTimeoutMs).then((r) => {
        if (!r.ok) log.warn({ uuid, error: r.error }, 'uuid_kill failed')
      })
    },
    hangupRequest(requestId) {
      const hup = commands.hupall('ORIGINATOR_CANCEL', CHANNEL_VARS.requestId, requestId)
      if (hup.ok && pbx.isConnected()) void pbx.bgapi(hup.value, commandTimeoutMs)
    },
  }
}
