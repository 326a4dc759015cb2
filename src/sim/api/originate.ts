/**
 * The originate API command (mod_commands.c originate_function): `+OK <uuid>\n` once a leg
 * answered, else `-ERR <CAUSE>\n`; the answered leg then runs `&app(arg)` or is transferred to
 * the extension (after the reply is out).
 */
import { originate } from '../calls/originate.js'
import type { Switch } from '../core/switch.js'
import { separateString } from '../text/fs-strings.js'
import { usage, type ApiReply } from './reply.js'

const ORIGINATE_SYNTAX = '<call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] [<cid_name>] [<cid_num>] [<timeout_sec>]'

/** originate_function (mod_commands.c): `+OK <uuid>\n` or `-ERR <CAUSE>\n`. */
export async function originateApi(sw: Switch, arg: string): Promise<ApiReply> {
  if (arg === '') return usage(ORIGINATE_SYNTAX)
  const argv: Array<string | undefined> = separateString(arg, ' ', 10)
  if (argv.length < 2 || argv.length > 7) return usage(ORIGINATE_SYNTAX)
  for (let i = 0; i < argv.length; i++) if (argv[i]?.toLowerCase() === 'undef') argv[i] = undefined
  const [aleg, exten, dp, context, cidName, cidNum, timeout] = argv
  if (aleg === undefined || exten === undefined) return usage(ORIGINATE_SYNTAX)
  const res = await originate(sw, {
    dialString: aleg,
    timeoutSec: timeout !== undefined ? parseInt(timeout, 10) || 60 : 60,
    ...(cidName !== undefined ? { cidName } : {}),
    ...(cidNum !== undefined ? { cidNum } : {}),
  })
  if (!res.ok) return { text: `-ERR ${res.cause}\n` }
  const s = res.session
  let after: () => void
  if (exten.startsWith('&') && exten.length > 1) {
    let app = exten.slice(1)
    const close = app.indexOf(')')
    if (close >= 0) app = app.slice(0, close)
    const open = app.indexOf('(')
    const name = open < 0 ? app : app.slice(0, open)
    const appArg = open < 0 ? '' : app.slice(open + 1)
    after = () => sw.requestStep(s, { kind: 'execute', apps: [{ name, arg: appArg }] })
  } else {
    after = () => sw.transfer(s, exten, dp ?? 'XML', context ?? 'default')
  }
  return { text: `+OK ${s.uuid}\n`, after }
}
