/**
 * API commands (`api` / `bgapi` and `${api(args)}`), with FreeSWITCH's reply texts:
 * mod_commands.c (originate_function, kill_function, uuid_bridge_function, transfer_function,
 * uuid_setvar/getvar/exists/answer, park_function, hupall_api_function, global_getvar, status,
 * show) and mod_sofia.c (sofia_contact_function). Captures: esl/01, 03, 20, 22, 23, 24.
 */
import { str2cause } from './causes.js'
import { localStamp } from './events.js'
import type { SwitchCore } from './core.js'
import { separateString } from './fs-strings.js'
import { originate } from './originate.js'
import type { Session } from './session.js'

export interface ApiReply {
  readonly text: string
  /** Runs after the reply (or BACKGROUND_JOB) is out: the originated leg starts its application. */
  readonly after?: () => void
}

const ORIGINATE_SYNTAX = '<call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] [<cid_name>] [<cid_num>] [<timeout_sec>]'
const usage = (syntax: string): ApiReply => ({ text: `-USAGE: ${syntax}\n` })

/** `{"row_count": 0}\n` when idle; otherwise compact JSON without a newline (capture 03). */
function rowsJson(rows: Array<Record<string, string>>): string {
  if (rows.length === 0) return '{"row_count": 0}\n'
  return JSON.stringify({ row_count: rows.length, rows })
}

/** `show channels` CSV: header, rows, blank line, `N total.` (capture 03). */
function rowsCsv(columns: readonly string[], rows: Array<Record<string, string>>): string {
  const lines = [columns.join(','), ...rows.map((r) => columns.map((c) => r[c] ?? '').join(','))]
  return `${lines.join('\n')}\n\n${rows.length} total.\n`
}

const CHANNEL_COLUMNS = [
  'uuid', 'direction', 'created', 'created_epoch', 'name', 'state', 'cid_name', 'cid_num', 'ip_addr', 'dest',
  'application', 'application_data', 'dialplan', 'context', 'read_codec', 'read_rate', 'read_bit_rate',
  'write_codec', 'write_rate', 'write_bit_rate', 'secure', 'hostname', 'presence_id', 'presence_data',
  'accountcode', 'callstate', 'callee_name', 'callee_num', 'callee_direction', 'call_uuid', 'sent_callee_name',
  'sent_callee_num', 'initial_cid_name', 'initial_cid_num', 'initial_ip_addr', 'initial_dest',
  'initial_dialplan', 'initial_context',
] as const

const CALL_COLUMNS = [
  'uuid', 'direction', 'created', 'created_epoch', 'name', 'state', 'cid_name', 'cid_num', 'ip_addr', 'dest',
  'presence_id', 'presence_data', 'accountcode', 'callstate', 'callee_name', 'callee_num', 'callee_direction',
  'call_uuid', 'hostname', 'sent_callee_name', 'sent_callee_num', 'b_uuid', 'b_direction', 'b_created',
  'b_created_epoch', 'b_name', 'b_state', 'b_cid_name', 'b_cid_num', 'b_ip_addr', 'b_dest', 'b_presence_id',
  'b_presence_data', 'b_accountcode', 'b_callstate', 'b_callee_name', 'b_callee_num', 'b_callee_direction',
  'b_sent_callee_name', 'b_sent_callee_num', 'call_created_epoch',
] as const

function channelRow(core: SwitchCore, s: Session): Record<string, string> {
  const p = s.profile
  const ip = s.initialProfile
  const row: Record<string, string> = {
    uuid: s.uuid,
    direction: s.direction,
    created: localStamp(s.createdAt),
    created_epoch: String(Math.floor(s.createdAt.getTime() / 1000)),
    name: s.name,
    state: s.runningState,
    cid_name: p.callerIdName ?? '',
    cid_num: p.callerIdNumber ?? '',
    ip_addr: s.direction === 'inbound' ? (p.networkAddr ?? '') : '',
    dest: p.destinationNumber,
    application: s.currentApp?.name ?? '',
    application_data: s.currentApp?.arg ?? '',
    dialplan: p.dialplan ?? '',
    context: p.context,
    read_codec: s.mediaUp ? 'PCMU' : '',
    read_rate: s.mediaUp ? '8000' : '',
    read_bit_rate: s.mediaUp ? '64000' : '',
    write_codec: s.mediaUp ? 'PCMU' : '',
    write_rate: s.mediaUp ? '8000' : '',
    write_bit_rate: s.mediaUp ? '64000' : '',
    secure: '',
    hostname: core.bus.identity.hostname,
    presence_id: s.presenceId ?? '',
    presence_data: '',
    accountcode: s.getVar('accountcode') ?? '',
    callstate: s.callState,
    callee_name: p.calleeIdName ?? '',
    callee_num: p.calleeIdNumber ?? '',
    callee_direction: s.getVar('channel_cid_flipped') === 'yes' ? 'RECV' : '',
    call_uuid: s.callUuid,
    sent_callee_name: '',
    sent_callee_num: '',
    initial_cid_name: ip.callerIdName ?? '',
    initial_cid_num: ip.callerIdNumber ?? '',
    initial_ip_addr: '',
    initial_dest: ip.destinationNumber,
    initial_dialplan: ip.dialplan ?? '',
    initial_context: ip.context,
  }
  return row
}

/** `show calls`: a row per call; a bridged B leg is folded into its A leg's row as b_*. */
function callRows(core: SwitchCore): Array<Record<string, string>> {
  const rows: Array<Record<string, string>> = []
  for (const s of core.sessions.values()) {
    if (s.bridge !== undefined && s.bridge.b === s) continue
    const a = channelRow(core, s)
    const row: Record<string, string> = {}
    for (const c of CALL_COLUMNS) row[c] = c.startsWith('b_') || c === 'call_created_epoch' ? '' : (a[c] ?? '')
    const b = s.bridge?.a === s ? s.bridge.b : undefined
    if (b !== undefined) {
      const br = channelRow(core, b)
      for (const c of CALL_COLUMNS) if (c.startsWith('b_')) row[c] = br[c.slice(2)] ?? ''
      row['call_created_epoch'] = a['created_epoch'] ?? ''
    }
    rows.push(row)
  }
  return rows
}

function status(core: SwitchCore): string {
  let ms = Date.now() - core.startedAt
  const d = Math.floor(ms / 86400000)
  ms -= d * 86400000
  const h = Math.floor(ms / 3600000)
  ms -= h * 3600000
  const m = Math.floor(ms / 60000)
  ms -= m * 60000
  const sec = Math.floor(ms / 1000)
  ms -= sec * 1000
  const n = core.sessions.size
  return (
    `UP 0 years, ${d} days, ${h} hours, ${m} minutes, ${sec} seconds, ${ms} milliseconds, 0 microseconds\n` +
    'FreeSWITCH (Version 1.10.12-release  64bit) is ready\n' +
    `${core.sessionsSinceStartup} session(s) since startup\n` +
    `${n} session(s) - peak ${core.peakSessions}, last 5min ${core.peakSessions} \n` +
    `0 session(s) per Sec out of max 100, peak 1, last 5min 1 \n` +
    '1000 session(s) max\n' +
    'min idle cpu 0.00/99.00\n' +
    'Current Stack Size/Max 240K/8192K\n'
  )
}

/** sofia_contact [profile/]user@domain: registered contacts, comma-joined, or error/user_not_registered. */
export function sofiaContact(core: SwitchCore, arg: string): string {
  if (arg === '') return ''
  const slash = arg.indexOf('/')
  const userPart = slash < 0 ? arg : arg.slice(slash + 1)
  const at = userPart.indexOf('@')
  const user = at < 0 ? userPart : userPart.slice(0, at)
  const domain = at < 0 ? (core.globals.get('domain') ?? '') : userPart.slice(at + 1)
  const contacts = core.registry.contacts(domain, user).map((c) => `sofia/${core.profile}/${c}`)
  return contacts.length === 0 ? 'error/user_not_registered' : contacts.join(',')
}

/** Commands that answer at once (also used for `${api(args)}` expansion). */
export function syncApi(core: SwitchCore, cmd: string, arg: string): ApiReply | undefined {
  switch (cmd) {
    case 'status':
      return { text: status(core) }
    case 'sofia_contact':
      return { text: sofiaContact(core, arg) }
    case 'global_getvar':
      return { text: arg === '' ? [...core.globals].map(([k, v]) => `${k}=${v}`).join('\n') + '\n' : (core.globals.get(arg) ?? '') }
    case 'hostname':
      return { text: core.bus.identity.hostname }
    case 'version':
      return { text: 'FreeSWITCH Version 1.10.12-release~64bit (-release 64bit)\n' }
    case 'show': {
      const words = separateString(arg, ' ')
      const what = (words[0] ?? '').toLowerCase()
      const json = words.length >= 3 && words[1]?.toLowerCase() === 'as' && words[2]?.toLowerCase() === 'json'
      if (what === 'channels') {
        const rows = [...core.sessions.values()].map((s) => channelRow(core, s))
        return { text: json ? rowsJson(rows) : rowsCsv(CHANNEL_COLUMNS, rows) }
      }
      if (what === 'calls') {
        const rows = callRows(core)
        return { text: json ? rowsJson(rows) : rowsCsv(CALL_COLUMNS, rows) }
      }
      return { text: '-USAGE: codec|endpoint|application|api|dialplan|file|timer|calls [count]|channels [count|like <match string>]|calls|detailed_calls|bridged_calls|detailed_bridged_calls|aliases|complete|chat|management|modules|nat_map|say|interfaces|interface_types|tasks|limits|status\n' }
    }
    case 'uuid_exists':
      return { text: arg !== '' && core.sessions.has(arg) ? 'true' : 'false' }
    case 'uuid_kill': {
      if (arg === '') return usage('<uuid> [cause]')
      const sp = arg.indexOf(' ')
      const uuid = sp < 0 ? arg : arg.slice(0, sp)
      const cause = sp < 0 ? 'NORMAL_CLEARING' : str2cause(arg.slice(sp + 1).trim())
      const s = core.sessions.get(uuid)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      core.hangup(s, cause)
      return { text: '+OK\n' }
    }
    case 'uuid_bridge': {
      const a = separateString(arg, ' ', 4)
      if (arg === '' || a.length < 2) return usage('<uuid> <other_uuid>')
      if (core.uuidBridge(a[0] as string, a[1] as string)) return { text: `+OK ${a[1] as string}\n` }
      if (a[2] !== undefined && core.uuidBridge(a[0] as string, a[2])) return { text: `+OK ${a[2]}\n` }
      return { text: '-ERR Invalid uuid\n' }
    }
    case 'uuid_transfer': {
      const syntax = '<uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]'
      if (arg === '') return usage(syntax)
      const a = separateString(arg, ' ', 5)
      if (a.length < 2 || a.length > 5) return usage(syntax)
      let s = core.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      let rest = a.slice(1)
      if ((rest[0] ?? '').startsWith('-')) {
        const flag = (rest[0] as string).slice(1).toLowerCase()
        rest = rest.slice(1)
        const other = s.bridge === undefined ? undefined : s.bridge.a === s ? s.bridge.b : s.bridge.a
        if (flag === 'bleg' && other !== undefined) s = other
        else if (flag === 'both' && other !== undefined) core.transfer(other, rest[0] ?? '', rest[1], rest[2])
      }
      if (rest[0] === undefined || rest[0] === '') return usage(syntax)
      core.transfer(s, rest[0], rest[1], rest[2])
      return { text: '+OK\n' }
    }
    case 'uuid_setvar': {
      const a = separateString(arg, ' ', 3)
      if ((a.length !== 2 && a.length !== 3) || a[0] === '') return usage('<uuid> <var> [value]')
      const s = core.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      if (a[1] === '') return { text: '-ERR No variable specified\n' }
      s.setVar(a[1] as string, a[2])
      if (a[1] === 'presence_id') s.presenceId = a[2]
      return { text: '+OK\n' }
    }
    case 'uuid_getvar': {
      const a = separateString(arg, ' ', 4)
      if (a.length < 2 || a[0] === '') return usage('<uuid> <var>')
      const s = core.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      return { text: s.getVar(a[1] as string) ?? '_undef_' }
    }
    case 'uuid_answer': {
      const s = core.sessions.get(arg)
      if (s === undefined || !s.up) return { text: '-ERROR\n' }
      core.answer(s)
      return { text: '+OK\n' }
    }
    case 'uuid_park': {
      if (arg === '') return usage('<uuid>')
      const s = core.sessions.get(arg)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      core.requestStep(s, { kind: 'park' })
      return { text: '+OK\n' }
    }
    case 'hupall':
      return { text: hupall(core, arg) }
    default:
      return undefined
  }
}

/** hupall <cause> [<var> <value>]...: the same reply whether or not anything matched (capture 20, 22). */
function hupall(core: SwitchCore, arg: string): string {
  const argv = arg === '' ? [] : separateString(arg, ' ', 11)
  // switch_channel_str2cause: unknown names give NORMAL_CLEARING; NONE (or 0) means MANAGER_REQUEST.
  let cause = 'MANAGER_REQUEST'
  if (argv[0] !== undefined) {
    const c = str2cause(argv[0])
    cause = c === 'NONE' ? 'MANAGER_REQUEST' : c
  }
  const vars: Array<[string, string]> = []
  for (let i = 1; i < argv.length - 1; i += 2) {
    const k = argv[i]
    const v = argv[i + 1]
    if (k !== undefined && k !== '' && v !== undefined && v !== '') vars.push([k, v])
  }
  // switch_core_session_hupall / hupall_matching_vars: every variable must match.
  for (const s of [...core.sessions.values()]) {
    if (!s.up) continue
    if (vars.every(([k, v]) => s.getVar(k) === v)) core.hangup(s, cause)
  }
  if (vars.length === 0) return `+OK hangup all channels with cause ${cause}\n`
  const [k, v] = vars[0] as [string, string]
  return vars.length === 1 ? `+OK hangup all channels matching [${k}]=[${v}] with cause: ${cause}\n` : `+OK hangup all channels matching [${k}]=[${v}]... with cause: ${cause}\n`
}

/** originate_function (mod_commands.c): `+OK <uuid>\n` or `-ERR <CAUSE>\n`. */
async function originateApi(core: SwitchCore, arg: string): Promise<ApiReply> {
  if (arg === '') return usage(ORIGINATE_SYNTAX)
  const argv: Array<string | undefined> = separateString(arg, ' ', 10)
  if (argv.length < 2 || argv.length > 7) return usage(ORIGINATE_SYNTAX)
  for (let i = 0; i < argv.length; i++) if (argv[i]?.toLowerCase() === 'undef') argv[i] = undefined
  const [aleg, exten, dp, context, cidName, cidNum, timeout] = argv
  if (aleg === undefined || exten === undefined) return usage(ORIGINATE_SYNTAX)
  const res = await originate(core, {
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
    after = () => core.requestStep(s, { kind: 'execute', apps: [{ name, arg: appArg }] })
  } else {
    after = () => core.transfer(s, exten, dp ?? 'XML', context ?? 'default')
  }
  return { text: `+OK ${s.uuid}\n`, after }
}

/** Runs an API command; `undefined` when FreeSWITCH has no such command. */
export async function executeApi(core: SwitchCore, cmd: string, arg: string): Promise<ApiReply | undefined> {
  if (cmd === 'originate') return originateApi(core, arg)
  return syncApi(core, cmd, arg)
}
