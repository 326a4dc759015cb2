/**
 * FreeSWITCH's own session rate (`sessions-per-second` in switch.conf.xml, or `fsctl sps N` at
 * run time), read with `fsctl sps` at every connection: the pace of originates stays below it
 * (origination/pace.ts, docs/engine.md "Pacing"). Read again at each connection because a
 * restarted or reconfigured FreeSWITCH may have another; between connections the last reading
 * stands (an operator's `fsctl sps` while connected is seen at the next connection).
 */
import type { Logger } from '../util/logger.js'
import { readSessionsPerSecond } from './commands.js'
import { parseSessionsPerSecond } from './replies.js'
import type { PbxClient } from './types.js'

export interface SessionRate {
  /** FreeSWITCH's sessions-per-second as last read; undefined before the first reading succeeded. */
  current(): number | undefined
  stop(): void
}

export function watchSessionRate(pbx: Pick<PbxClient, 'api' | 'onConnected' | 'isConnected'>, timeoutMs: number, log: Logger): SessionRate {
  let rate: number | undefined
  const read = async () => {
    const cmd = readSessionsPerSecond()
    if (!cmd.ok) return
    const r = await pbx.api(cmd.value, timeoutMs)
    const read = r.ok ? parseSessionsPerSecond(r.value) : undefined
    if (read === undefined) {
      // The last reading (or the default, docs/engine.md "Pacing") stays: pacing goes on, only less exactly.
      log.warn({ reply: r.ok ? r.value : r.error }, 'could not read FreeSWITCH sessions-per-second (fsctl sps)')
      return
    }
    if (read !== rate) log.info({ sessionsPerSecond: read }, 'FreeSWITCH sessions-per-second')
    rate = read
  }
  const unsubscribe = pbx.onConnected(() => void read())
  // Connected before this was made (the daemon connects first): the connection's turn is over.
  if (pbx.isConnected()) void read()
  return { current: () => rate, stop: unsubscribe }
}
