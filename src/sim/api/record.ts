/**
 * `uuid_record <uuid> start|stop <path>` (mod_commands.c session_record_function), with the reply
 * texts of test/fixtures/freeswitch/esl/48-uuid-record.txt: `+OK Success`, `-ERR Cannot locate
 * session!` for a leg that is gone, `-ERR Cannot stop record session!` when nothing records that
 * path; RECORD_START / RECORD_STOP come before the reply (apps/record-session.ts). Not modelled:
 * `mask`/`unmask`, the `<limit>` argument, `stop all`.
 */
import type { Switch } from '../core/switch.js'
import { startRecording, stopRecording } from '../apps/record-session.js'
import { separateString } from '../text/fs-strings.js'
import { usage, type ApiReply } from './reply.js'

const SYNTAX = '<uuid> [start|stop|mask|unmask] <path> [<limit>] [<recording_vars>]'

export async function uuidRecordApi(sw: Switch, arg: string): Promise<ApiReply> {
  const [uuid, action, path] = separateString(arg.trim(), ' ', 4)
  if (uuid === undefined || uuid === '' || action === undefined || path === undefined || path === '') return usage(SYNTAX)
  const s = sw.sessions.get(uuid)
  if (s === undefined || !s.up) return { text: '-ERR Cannot locate session!\n' }
  switch (action.toLowerCase()) {
    case 'start':
      return (await startRecording(sw, s, path)) ? { text: '+OK Success\n' } : { text: '-ERR Cannot execute record session!\n' }
    case 'stop':
      return (await stopRecording(s, path)) ? { text: '+OK Success\n' } : { text: '-ERR Cannot stop record session!\n' }
    default:
      return usage(SYNTAX)
  }
}
