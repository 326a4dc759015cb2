/**
 * One entry for every API command an ESL connection runs: originate (which waits for an answer)
 * or uuid_record (which opens or finishes a file) or one of the commands that answer at once.
 */
import type { Switch } from '../core/switch.js'
import { originateApi } from './originate.js'
import type { ApiReply } from './reply.js'
import { uuidRecordApi } from './record.js'
import { syncApi } from './sync.js'

/** Runs an API command; `undefined` when FreeSWITCH has no such command. */
export async function executeApi(sw: Switch, cmd: string, arg: string): Promise<ApiReply | undefined> {
  if (cmd === 'originate') return originateApi(sw, arg)
  if (cmd === 'uuid_record') return uuidRecordApi(sw, arg)
  return syncApi(sw, cmd, arg)
}
