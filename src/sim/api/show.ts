/**
 * `show channels` and `show calls` (mod_commands.c show_function over the core's channel table):
 * the column sets FreeSWITCH 1.10.12 prints, as CSV with a `N total.` line or `as json`
 * (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt).
 */
import type { Switch } from '../core/switch.js'
import { registrationRows, REGISTRATION_COLUMNS } from '../calls/registrations.js'
import { localStamp } from '../model/events.js'
import type { Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'

/**
 * `{"row_count": 0}\n` when idle; otherwise compact JSON without a newline
 * (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt).
 */
function rowsJson(rows: Array<Record<string, string>>): string {
  if (rows.length === 0) return '{"row_count": 0}\n'
  return JSON.stringify({ row_count: rows.length, rows })
}

/**
 * `show channels` CSV: header, rows, blank line, `N total.`
 * (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt).
 */
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

function channelRow(sw: Switch, s: Session): Record<string, string> {
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
    hostname: sw.bus.identity.hostname,
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
function callRows(sw: Switch): Array<Record<string, string>> {
  const rows: Array<Record<string, string>> = []
  for (const s of sw.sessions.values()) {
    if (s.bridge !== undefined && s.bridge.b === s) continue
    const a = channelRow(sw, s)
    const row: Record<string, string> = {}
    for (const c of CALL_COLUMNS) row[c] = c.startsWith('b_') || c === 'call_created_epoch' ? '' : (a[c] ?? '')
    const b = s.bridge?.a === s ? s.bridge.b : undefined
    if (b !== undefined) {
      const br = channelRow(sw, b)
      for (const c of CALL_COLUMNS) if (c.startsWith('b_')) row[c] = br[c.slice(2)] ?? ''
      row['call_created_epoch'] = a['created_epoch'] ?? ''
    }
    rows.push(row)
  }
  return rows
}

/** show <channels|calls|registrations> [as json]; any other listing gets the usage text. */
export function show(sw: Switch, arg: string): string {
  const words = separateString(arg, ' ')
  const what = (words[0] ?? '').toLowerCase()
  const json = words.length >= 3 && words[1]?.toLowerCase() === 'as' && words[2]?.toLowerCase() === 'json'
  if (what === 'channels') {
    const rows = [...sw.sessions.values()].map((s) => channelRow(sw, s))
    return json ? rowsJson(rows) : rowsCsv(CHANNEL_COLUMNS, rows)
  }
  if (what === 'registrations') {
    // test/fixtures/freeswitch/esl/27-sofia-register-events.txt (json), 02-sofia-contact-two-registrations.txt (CSV).
    const rows = registrationRows(sw)
    return json ? rowsJson(rows) : rowsCsv(REGISTRATION_COLUMNS, rows)
  }
  if (what === 'calls') {
    const rows = callRows(sw)
    return json ? rowsJson(rows) : rowsCsv(CALL_COLUMNS, rows)
  }
  return '-USAGE: codec|endpoint|application|api|dialplan|file|timer|calls [count]|channels [count|like <match string>]|calls|detailed_calls|bridged_calls|detailed_bridged_calls|aliases|complete|chat|management|modules|nat_map|say|interfaces|interface_types|tasks|limits|status\n'
}
