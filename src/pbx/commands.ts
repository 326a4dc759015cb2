/**
 * THE ONLY module that writes the text of ESL commands (their bodies: api, bgapi, sendmsg) and dial
 * strings (pbx/types.ts brands its output); the framing around them is the link's (docs/architecture.md).
 * It is one file, and longer than our usual ~400 lines, on purpose: every byte that can reach
 * FreeSWITCH's command line is written here, so an audit of the escaping reads one file, and a
 * new command cannot be added without passing the same checks (docs/design.md, security rules).
 *
 * Every value is checked against a narrow alphabet for its kind before it is written, and the
 * few free-text values (caller id name, end_user) are neutralised, not trusted. Why the
 * alphabets are what they are, from FreeSWITCH's own parsers (signalwire/freeswitch):
 *
 * - mod_event_socket.c (read_packet / parse_command): a command ends at the first CR or LF, so a
 *   CR, LF or NUL in a value would start a new ESL command. No value may hold a control character.
 * - mod_commands.c originate_function: the argument line is split on blanks with
 *   switch_separate_string(' ') (switch_utils.c separate_string_blank_delim): an unquoted space
 *   starts the next argument (extension, dialplan, context, cid...), `'` toggles quoting and
 *   cleanup_separated_string removes the quotes and turns `\x` escapes (`\s`, `\n`...) into
 *   characters. So values may not hold spaces, quotes or backslashes, except the one we quote.
 * - switch_ivr_originate.c switch_ivr_originate: `<...>` and `{...}` at the start are global
 *   variables (switch_event_create_brackets, switch_event.c), split on `,`; the rest is split on
 *   `|` (failover groups) then `,` (legs rung together); `[...]` at the start of a leg holds that
 *   leg's variables. `^^<c>` at the start of a bracket or list changes the delimiter to <c>
 *   (switch_separate_string and switch_event_create_brackets). `:_:` ANYWHERE in the string
 *   switches to enterprise originate (SWITCH_ENT_ORIGINATE_DELIM), and the text
 *   `origination_nested_vars=true` anywhere turns off the `${` check on variables. So values may
 *   not hold `, | { } [ ] < > ^ ' " \` and never the sequences `:_:` or `${`.
 * - switch_channel.c switch_channel_set_variable_var_check + switch_utils.h
 *   switch_string_var_check_const: FreeSWITCH expands `${...}` (including `${api(args)}`, which
 *   runs an API command) in variables and application data, so `$` is refused everywhere.
 *
 * The one `$` it writes: the fixed `${hangup_cause}:${answer_epoch}` of a leg's hangup record
 * (hangupRecordVar), around a checked realm and key, in an originate that turns the `${` check
 * off for that purpose alone (the text `origination_nested_vars=true`, as the value of the first
 * of its globals: LEG_RECORDS_MARK): the rest of that originate is checked to hold no `$` and no
 * other `origination_nested_vars=true` before the records are added (originate). The hook
 * variables are reserved, no caller sets them (src/pbx/leg-record.ts).
 *
 * Validated kinds: uuid, user name, domain, number, cause, variable name, token (variable
 * values), gateway, extension. Free text: caller id name (neutralised + quoted), end_user
 * (percent-encoded JSON in `cod_end_user`, see encodeEndUser/decodeEndUser).
 */
import { err, ok, type Result } from '../util/result.js'
import type { EslApp, EslCommand, InstantCommand } from './types.js'
import { END_USER_FIELDS, type EndUser } from './end-user.js'

export interface CommandError {
  /** Which input was refused (e.g. `legs[1].uuid`, `vars.cod_domain`). */
  readonly field: string
  readonly reason: string
}

const fail = (field: string, reason: string): Result<never, CommandError> => err({ field, reason })

/** Narrow alphabets, one per kind of value (see the file comment for why). */
export const PATTERNS = {
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  /** SIP user name / directory name (config NAME_RE). */
  userName: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  domain: /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
  /** PSTN numbers, extensions, DIDs: optional +, then digits, * and #. */
  number: /^\+?[0-9*#]{1,32}$/,
  /** Hangup cause names as switch_channel_str2cause knows them (NORMAL_CLEARING, USER_BUSY...). */
  cause: /^[A-Z][A-Z0-9_]{1,63}$/,
  /** Channel variable names; `-` for sip_h_<Header-Name>. */
  varName: /^[A-Za-z][A-Za-z0-9_-]{0,127}$/,
  /**
   * Values of channel variables we set: ids, names, numbers, uuids, percent-encoded text. Up to
   * 32768: the largest end_user the API accepts (four fields of 256 and an avatar of 2048 UTF-16
   * units, docs/api.md) percent-encodes to about 28,000 characters (9 per unit at worst), and
   * mod_event_socket.c read_packet grows its buffer to 10 MB, so no shorter cap is needed.
   */
  token: /^[A-Za-z0-9._@+#*%-]{0,32768}$/,
  /** Gateway and SIP profile names. */
  gateway: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  /** Dialplan extension (destination number) of a transfer or originate target. */
  extension: /^[A-Za-z0-9_+*#.-]{1,64}$/,
  /** Dialplan application names for sendmsg execute. */
  appName: /^[a-z][a-z0-9_]{0,63}$/,
  /**
   * Values inside dialplan application data the daemon writes (`set name=<v>`, dial targets of
   * the xml_curl dialplan and of the IVR's Transfer, src/xmlcurl/values.ts): the token alphabet
   * plus `/` and `=`, no length cap (documents carry percent-encoded end_user JSON); none of
   * `$ { } [ ] , | ' ^ : ;`, spaces or quotes.
   */
  appValue: /^[A-Za-z0-9._@+*#%/=-]*$/,
  /** DTMF a client plays into a live channel (uuid_recv_dtmf): the sixteen keys, 1 to 64 of them. */
  dtmf: /^[0-9*#A-D]{1,64}$/,
  /**
   * DTMF sent on answer (send_dtmf): the keys plus `w` (0.5 s pause) and `W` (1 s), as
   * switch_core_io.c switch_core_session_send_dtmf_string reads them (is_dtmf accepts w and W).
   * It also splits on `+` and reads `@<ms>` and a leading `~`: none of them is allowed.
   */
  dtmfWithPauses: /^[0-9*#A-DwW]{1,64}$/,
} as const

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\x00-\x1f\x7f]/

/**
 * THE check every value passes before it is written into an ESL command, a channel variable, a
 * dial string or dialplan application data: the narrow alphabet of its kind (PATTERNS). The
 * xml_curl documents use it too (src/xmlcurl/values.ts safe), so there is one rule, not two.
 */
export const checkValue = (kind: keyof typeof PATTERNS, field: string, value: string): Result<string, CommandError> =>
  PATTERNS[kind].test(value) ? ok(value) : fail(field, `not a valid ${kind}`)

const check = checkValue

/** A contact as `sofia_contact` returns it: `sofia/<profile>/sip:user@host:port;params`. */
const CONTACT = /^sofia\/[A-Za-z0-9._-]{1,64}\/sips?:[A-Za-z0-9._~%!*+=;:@/<>?&[\]-]{1,480}$/

/** Validates one contact returned by sofia_contact before it is used as a leg's endpoint. */
export function checkContact(contact: string, field = 'contact'): Result<string, CommandError> {
  if (!CONTACT.test(contact)) return fail(field, 'not a sofia contact in the safe alphabet')
  // `:_:` anywhere makes the whole originate an enterprise originate (switch_ivr_originate.c).
  if (contact.includes(':_:')) return fail(field, 'contains the enterprise delimiter ":_:"')
  if (/origination_nested_vars/i.test(contact)) return fail(field, 'names origination_nested_vars')
  return ok(contact)
}

export type Endpoint =
  /** A registered terminal, as returned by sofia_contact. */
  | { readonly kind: 'contact'; readonly contact: string }
  /** A PSTN number through a gateway: `sofia/gateway/<gateway>/<number>`. */
  | { readonly kind: 'gateway'; readonly gateway: string; readonly number: string }
  /** `user/<name>@<domain>` (forks inside one leg when the user has several terminals: avoid). */
  | { readonly kind: 'user'; readonly user: string; readonly domain: string }

export interface OriginateLeg {
  /** Pre-assigned channel UUID (`[origination_uuid=...]`: in `{}` it would reach one leg only). */
  readonly uuid: string
  readonly endpoint: Endpoint
  /** Variables of this leg only (`[...]`). */
  readonly vars?: Readonly<Record<string, string>>
  /** Adds the SIP auto-answer headers to this leg; `host` goes into the header URIs. */
  readonly autoAnswer?: { readonly host: string }
  /** FreeSWITCH records the leg's answer and its hangup here itself (answerRecordVar, hangupRecordVar). */
  readonly record?: HashSlot
}

/**
 * A mod_hash entry: `hash insert/<realm>/<key>/<value>` stores it under `<realm>_<key>`
 * (mod_hash.c hash_api_function splits its argument on `/` into at most 4 parts, so realm and
 * key hold no `/`). Its values outlive the daemon: FreeSWITCH keeps them in memory.
 */
export interface HashSlot {
  readonly realm: string
  readonly key: string
}

/** Realm and key of a HashSlot: the token alphabet without `/` (and never empty). */
const HASH_PART = /^[A-Za-z0-9._@+#*%-]{1,256}$/

function checkSlot(field: string, slot: HashSlot): Result<string, CommandError> {
  if (!HASH_PART.test(slot.realm)) return fail(`${field}.realm`, 'not a valid hash realm')
  if (!HASH_PART.test(slot.key)) return fail(`${field}.key`, 'not a valid hash key')
  return ok(`${slot.realm}/${slot.key}`)
}

/** What the hooks write: `answered` on answer; `<CAUSE>:<answer_epoch>` at hangup. */
export const LEG_RECORD_ANSWERED = 'answered'

/**
 * `api_on_answer='hash insert/<realm>/<key>/answered'`: switch_channel.c runs every variable named
 * `api_on_answer*` as an API command when the leg answers (switch_channel_api_on, do_api_on: the
 * command up to the first space, then its argument). Quoted because of that space: the blank split
 * of originate_function keeps `'...'` together and cleanup_separated_string drops the quotes
 * (switch_utils.c).
 */
function answerRecordVar(field: string, slot: HashSlot): Result<string, CommandError> {
  const s = checkSlot(field, slot)
  if (!s.ok) return s
  return ok(`api_on_answer='hash insert/${s.value}/${LEG_RECORD_ANSWERED}'`)
}

/** What the hangup record says, expanded by FreeSWITCH at hangup: `<CAUSE>:<answer_epoch>`. */
const HANGUP_RECORD = '${hangup_cause}:${answer_epoch}'

/**
 * `api_hangup_hook='hash insert/<realm>/<key>/${hangup_cause}:${answer_epoch}'`: the leg records
 * its hangup cause, and whether it was ever answered (answer_epoch is 0 if not), when it hangs
 * up, also while the daemon is away. switch_core_state_machine.c switch_core_session_hangup_state
 * sets `hangup_cause` and the timestamps, then api_hook runs the variable: the command up to the
 * first space, its argument expanded with the channel's variables.
 *
 * The `${...}` must reach the channel unexpanded: the originate refuses a variable holding `${`
 * (switch_ivr_originate.c: every `{}` and `[]` variable goes through
 * switch_channel_set_variable_var_check with check_vars, "Invalid data (${<name>} contains a
 * variable)") unless `origination_nested_vars=true` appears in the dial string, which sets it
 * as written. So the originate carries that text, and is checked without these hooks first
 * (originate). Set by the originate, the hook is there from the leg's first instant: a leg that
 * fails before the daemon hears of it still records why (seen on FreeSWITCH 1.10.12:
 * `NORMAL_TEMPORARY_FAILURE:0` for a leg whose INVITE failed at once, `USER_BUSY:<epoch>` for
 * an answered leg killed with that cause).
 */
function hangupRecordVar(field: string, slot: HashSlot): Result<string, CommandError> {
  const s = checkSlot(field, slot)
  if (!s.ok) return s
  return ok(`api_hangup_hook='hash insert/${s.value}/${HANGUP_RECORD}'`)
}

/**
 * Turns the originate's `${` check off, for the hangup records alone (hangupRecordVar):
 * switch_ivr_originate.c looks for the text `origination_nested_vars=true` anywhere in the dial
 * string (switch_stristr). Written as the value of a variable of ours, not as that variable
 * itself: a channel whose `origination_nested_vars` variable is true turns the check off for
 * every bridge it makes later (the same function reads it from the calling channel), and the
 * legs' later bridges (the xml_curl dialplan, the IVR) keep FreeSWITCH's check (seen on
 * FreeSWITCH 1.10.12: the hook set, `origination_nested_vars` _undef_ on the leg).
 */
const LEG_RECORDS_MARK = 'cod_leg_records=origination_nested_vars=true'

export type OriginateTarget =
  /** The answered leg runs `<extension> XML <context>` (the daemon's xml_curl dialplan). */
  | { readonly kind: 'dialplan'; readonly extension: string; readonly context: string }
  /** The answered leg is parked (`&park()`). */
  | { readonly kind: 'park' }

export interface OriginateSpec {
  /** Rung together (`,`): the first to answer wins, FreeSWITCH hangs up the others (LOSE_RACE). */
  readonly legs: readonly OriginateLeg[]
  /** Variables of every leg (`{...}`). */
  readonly vars?: Readonly<Record<string, string>>
  /** Free text shown as caller name: neutralised (neutraliseCallerName) and quoted. */
  readonly callerIdName?: string
  readonly callerIdNumber?: string
  /** originate_timeout, seconds (a `{}` variable; leg_timeout would only work per leg). */
  readonly timeoutSec: number
  readonly target: OriginateTarget
  /** What the answered leg does on answer (onAnswerVars): hang up after a time, send DTMF. */
  readonly onAnswer?: OnAnswer
}

/**
 * What FreeSWITCH does on the answered originating leg, by itself (so it holds while the daemon
 * is away): switch_channel.c switch_channel_perform_mark_answered runs every variable whose name
 * starts with `execute_on_answer` as `<app> <arg>` (switch_channel_execute_on,
 * switch_channel_execute_on_value: the application up to the first space).
 */
export interface OnAnswer {
  /**
   * `sched_hangup +<n> ALLOTTED_TIMEOUT` (mod_dptools.c sched_hangup_function: `+` is relative,
   * the cause read by switch_channel_str2cause, whose chart spells it ALLOTTED_TIMEOUT: a
   * misspelt name would silently become NORMAL_CLEARING). switch_ivr_schedule_hangup counts in
   * whole epoch seconds and switch_scheduler.c looks every 100 ms, so the leg is hung up between
   * n-1 and n seconds after its answer (and not later than n + 0.1).
   */
  readonly hangupAfterSec?: number
  /** `send_dtmf <digits>` (mod_dptools.c send_dtmf_function): PATTERNS.dtmfWithPauses. */
  readonly sendDigits?: string
}

/** The longest time limit a call may get (a day), as the API allows. */
export const MAX_HANGUP_AFTER_SEC = 86_400

/** The `execute_on_answer*` variables of an originate (OnAnswer); quoted, as their values hold a space. */
function onAnswerVars(onAnswer: OnAnswer | undefined): Result<string[], CommandError> {
  const out: string[] = []
  if (onAnswer?.hangupAfterSec !== undefined) {
    const n = onAnswer.hangupAfterSec
    if (!Number.isInteger(n) || n < 1 || n > MAX_HANGUP_AFTER_SEC) return fail('onAnswer.hangupAfterSec', `must be a whole number of seconds from 1 to ${MAX_HANGUP_AFTER_SEC}`)
    out.push(`execute_on_answer_cod_time_limit='sched_hangup +${n} ALLOTTED_TIMEOUT'`)
  }
  if (onAnswer?.sendDigits !== undefined) {
    const d = check('dtmfWithPauses', 'onAnswer.sendDigits', onAnswer.sendDigits)
    if (!d.ok) return d
    out.push(`execute_on_answer_cod_send_digits='send_dtmf ${d.value}'`)
  }
  return ok(out)
}

/** Client hangup causes a channel may be given (CTI's hangup, the API's calls/{uuid}/hangup); NORMAL_CLEARING by default. */
export const CLIENT_HANGUP_CAUSES = ['NORMAL_CLEARING', 'USER_BUSY', 'CALL_REJECTED', 'NO_ANSWER', 'ORIGINATOR_CANCEL'] as const

/** Variables this module writes itself; a caller may not set them (or turn off the `${` check). */
const RESERVED_VARS = new Set([
  'origination_uuid',
  'origination_caller_id_name',
  'origination_caller_id_number',
  'originate_timeout',
  'ignore_early_media',
  'origination_nested_vars',
  'sip_h_call-info',
  'sip_h_alert-info',
  'sip_copy_custom_headers',
  // The leg's own record of its fate (answerRecordVar, hangupRecordVar, LEG_RECORDS_MARK): never from elsewhere.
  'api_on_answer',
  'api_hangup_hook',
  'api_reporting_hook',
  'session_in_hangup_hook',
  'cod_leg_records',
])

/** FreeSWITCH runs every variable with these prefixes as an application or API command (switch_channel_execute_on, switch_channel_api_on): only this module writes them. */
const RESERVED_PREFIXES = ['execute_on_', 'api_on_']

function formatVars(field: string, vars: Readonly<Record<string, string>> | undefined): Result<string[], CommandError> {
  const out: string[] = []
  for (const [name, value] of Object.entries(vars ?? {})) {
    if (!PATTERNS.varName.test(name)) return fail(`${field}.${name}`, 'not a valid variable name')
    if (RESERVED_VARS.has(name.toLowerCase())) return fail(`${field}.${name}`, 'is set by the command builder itself')
    if (RESERVED_PREFIXES.some((p) => name.toLowerCase().startsWith(p))) return fail(`${field}.${name}`, 'is set by the command builder itself')
    if (!PATTERNS.token.test(value)) return fail(`${field}.${name}`, 'value outside the safe alphabet')
    if (value === '') continue
    out.push(`${name}=${value}`)
  }
  return ok(out)
}

/**
 * Characters kept in a caller id name. Everything else (`, | { } [ ] < > ^ ' " \ $ = : ; ~` and
 * control characters) becomes a space: none of them can then open a leg, a variable, a quote,
 * an escape or an expansion. `:` goes so that `:_:` cannot be formed.
 */
const NAME_SAFE = /[A-Za-z0-9 .+\-_@#*/!?%&()]/

/**
 * The caller id name as it will be shown: unsafe characters blanked, spaces collapsed, 64 max.
 * @internal Exported for tests: test/pbx checks each character it neutralises.
 */
export function neutraliseCallerName(text: string): string {
  let out = ''
  for (const ch of text) out += NAME_SAFE.test(ch) ? ch : ' '
  return out.replace(/ +/g, ' ').trim().slice(0, 64).trim()
}

/**
 * `'...'` quoting survives the blank split of originate_function (cleanup_separated_string
 * strips the quotes), leaving a plain value with spaces inside `{}`, where a space is no delimiter.
 */
const quoteIfSpaced = (v: string): string => (v.includes(' ') ? `'${v}'` : v)

function formatEndpoint(field: string, e: Endpoint): Result<string, CommandError> {
  switch (e.kind) {
    case 'contact':
      return checkContact(e.contact, `${field}.contact`)
    case 'gateway': {
      const g = check('gateway', `${field}.gateway`, e.gateway)
      if (!g.ok) return g
      const n = check('number', `${field}.number`, e.number)
      if (!n.ok) return n
      return ok(`sofia/gateway/${g.value}/${n.value}`)
    }
    case 'user': {
      const u = check('userName', `${field}.user`, e.user)
      if (!u.ok) return u
      const d = check('domain', `${field}.domain`, e.domain)
      if (!d.ok) return d
      return ok(`user/${u.value}@${d.value}`)
    }
  }
}

/**
 * The auto-answer headers common phones honour (docs/design.md "Origination semantics",
 * auto_answer): Call-Info answer-after=0 (Snom, Yealink, Grandstream, Cisco SPA, Gigaset...; the
 * same header mod_sofia writes for sip_auto_answer=true, mod_sofia.c sofia_outgoing_channel) and
 * Alert-Info info=alert-autoanswer (Polycom, Aastra, Yealink). `sip_h_<Name>` variables become SIP
 * headers of the INVITE of that leg. FreeSWITCH also copies a channel's `sip_h_*` variables to
 * every leg it bridges that channel to (mod_sofia.c sofia_outgoing_channel, unless the calling
 * channel has `sip_copy_custom_headers=false`): without that, the destination phone of the answered
 * leg would auto-answer too (seen on a real FreeSWITCH 1.10.12).
 */
function autoAnswerVars(field: string, host: string): Result<string[], CommandError> {
  const h = check('domain', `${field}.autoAnswer.host`, host)
  if (!h.ok) return h
  return ok([
    `sip_h_Call-Info=<sip:${h.value}>;answer-after=0`,
    `sip_h_Alert-Info=<sip:${h.value}>;info=alert-autoanswer;delay=0`,
    'sip_copy_custom_headers=false',
  ])
}

const brand = (text: string): EslCommand => text as EslCommand
/** For the commands that answer at once (InstantCommand: they may run with `api`). */
const instant = (text: string): InstantCommand => text as InstantCommand

/** `originate {global}[leg1]ep1,[leg2]ep2 <target>` (one originate; legs rung together). */
export function originate(spec: OriginateSpec): Result<EslCommand, CommandError> {
  if (spec.legs.length === 0) return fail('legs', 'at least one leg')
  if (spec.legs.length > 128) return fail('legs', 'at most 128 legs')
  if (!Number.isInteger(spec.timeoutSec) || spec.timeoutSec < 1 || spec.timeoutSec > 3600) {
    return fail('timeoutSec', 'must be a whole number of seconds from 1 to 3600')
  }
  const globals: string[] = [`originate_timeout=${spec.timeoutSec}`, 'ignore_early_media=true']
  if (spec.callerIdName !== undefined) {
    const name = neutraliseCallerName(spec.callerIdName)
    if (name !== '') globals.push(`origination_caller_id_name=${quoteIfSpaced(name)}`)
  }
  if (spec.callerIdNumber !== undefined) {
    const n = check('number', 'callerIdNumber', spec.callerIdNumber)
    if (!n.ok) return n
    globals.push(`origination_caller_id_number=${n.value}`)
  }
  const gv = formatVars('vars', spec.vars)
  if (!gv.ok) return gv
  globals.push(...gv.value)
  const oa = onAnswerVars(spec.onAnswer)
  if (!oa.ok) return oa
  globals.push(...oa.value)

  const seen = new Set<string>()
  /** Each leg's variables, its hangup record apart (the originate is checked without it), its endpoint. */
  const legs: Array<{ readonly vars: readonly string[]; readonly hangupRecord: string | undefined; readonly endpoint: string }> = []
  for (const [i, leg] of spec.legs.entries()) {
    const field = `legs[${i}]`
    const u = check('uuid', `${field}.uuid`, leg.uuid)
    if (!u.ok) return u
    if (seen.has(u.value.toLowerCase())) return fail(`${field}.uuid`, 'used by another leg')
    seen.add(u.value.toLowerCase())
    const ep = formatEndpoint(`${field}.endpoint`, leg.endpoint)
    if (!ep.ok) return ep
    const lv = formatVars(`${field}.vars`, leg.vars)
    if (!lv.ok) return lv
    const legVars = [`origination_uuid=${u.value}`, ...lv.value]
    if (leg.autoAnswer !== undefined) {
      const aa = autoAnswerVars(field, leg.autoAnswer.host)
      if (!aa.ok) return aa
      legVars.push(...aa.value)
    }
    let hangupRecord: string | undefined
    if (leg.record !== undefined) {
      const rec = answerRecordVar(`${field}.record`, leg.record)
      if (!rec.ok) return rec
      legVars.push(rec.value)
      const hook = hangupRecordVar(`${field}.record`, leg.record)
      if (!hook.ok) return hook
      hangupRecord = hook.value
    }
    legs.push({ vars: legVars, hangupRecord, endpoint: ep.value })
  }
  const dialString = (withRecords: boolean): string =>
    legs.map((l) => `[${(withRecords && l.hangupRecord !== undefined ? [...l.vars, l.hangupRecord] : l.vars).join(',')}]${l.endpoint}`).join(',')

  let target: string
  if (spec.target.kind === 'park') {
    target = '&park()'
  } else {
    const x = check('extension', 'target.extension', spec.target.extension)
    if (!x.ok) return x
    const c = check('domain', 'target.context', spec.target.context)
    if (!c.ok) return c
    target = `${x.value} XML ${c.value}`
  }
  const checked = `originate {${globals.join(',')}}${dialString(false)} ${target}`
  // Belt and braces: whatever was validated above, these may never reach FreeSWITCH. Checked
  // before the hangup records are added, so their `${` and the text that lets it through are
  // the only ones the originate can carry.
  if (CONTROL.test(checked) || checked.includes('$') || checked.includes(':_:') || /origination_nested_vars=true/i.test(checked)) {
    return fail('originate', 'produced unsafe text')
  }
  if (!legs.some((l) => l.hangupRecord !== undefined)) return ok(brand(checked))
  return ok(brand(`originate {${[LEG_RECORDS_MARK, ...globals].join(',')}}${dialString(true)} ${target}`))
}

/** `sofia_contact <profile>/<user>@<domain>` (profile `*`: every profile): the comma list of registered contacts. */
export function sofiaContact(user: string, domain: string, profile = '*'): Result<InstantCommand, CommandError> {
  const u = check('userName', 'user', user)
  if (!u.ok) return u
  const d = check('domain', 'domain', domain)
  if (!d.ok) return d
  if (profile !== '*' && !PATTERNS.gateway.test(profile)) return fail('profile', 'not a valid profile name')
  // Instant: one select on the profile's registration table (mod_sofia.c sofia_contact_function).
  return ok(instant(`sofia_contact ${profile}/${u.value}@${d.value}`))
}

/** `uuid_exists <uuid>`: `true` or `false` (mod_commands.c exists_function; instant: a session lookup). */
export function uuidExists(uuid: string): Result<InstantCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  return ok(instant(`uuid_exists ${u.value}`))
}

/** `uuid_kill <uuid> [cause]` (mod_commands.c kill_function). */
export function uuidKill(uuid: string, cause?: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  if (cause === undefined) return ok(brand(`uuid_kill ${u.value}`))
  const c = check('cause', 'cause', cause)
  if (!c.ok) return c
  return ok(brand(`uuid_kill ${u.value} ${c.value}`))
}

/**
 * `uuid_bridge <a> <b>` (one of the two must be answered).
 * @internal Exported for tests: test/pbx checks the command text.
 */
export function uuidBridge(a: string, b: string): Result<EslCommand, CommandError> {
  const x = check('uuid', 'a', a)
  if (!x.ok) return x
  const y = check('uuid', 'b', b)
  if (!y.ok) return y
  return ok(brand(`uuid_bridge ${x.value} ${y.value}`))
}

/** `uuid_transfer <uuid> <extension> XML <context>` (mod_commands.c transfer_function). */
export function uuidTransfer(uuid: string, extension: string, context: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  const x = check('extension', 'extension', extension)
  if (!x.ok) return x
  const c = check('domain', 'context', context)
  if (!c.ok) return c
  return ok(brand(`uuid_transfer ${u.value} ${x.value} XML ${c.value}`))
}

/**
 * `uuid_recv_dtmf <uuid> <digits>` (mod_commands.c uuid_recv_dtmf_function,
 * switch_channel_queue_dtmf_string): the digits as if the leg's own party pressed them. They are
 * queued on the channel, which fires one DTMF event per digit (switch_channel_queue_dtmf), an
 * application on the leg (an IVR) reads them, and a bridge passes them on to the other leg's
 * party (switch_ivr_bridge.c). `-ERR Cannot locate session!` when the channel is gone.
 */
export function uuidRecvDtmf(uuid: string, digits: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  const d = check('dtmf', 'digits', digits)
  if (!d.ok) return d
  return ok(brand(`uuid_recv_dtmf ${u.value} ${d.value}`))
}

/**
 * `uuid_hold <uuid>` / `uuid_hold off <uuid>` (mod_commands.c uuid_hold_function,
 * switch_ivr_hold_uuid / switch_ivr_unhold_uuid): `+OK Success` or `-ERR Operation failed`.
 */
export function uuidHold(uuid: string, on: boolean): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  return ok(brand(on ? `uuid_hold ${u.value}` : `uuid_hold off ${u.value}`))
}

/** A file FreeSWITCH records to: absolute, `.wav`, no `..` or empty segment, and only characters of the application data alphabet without `=` (a space would end the argument). */
const RECORD_PATH = /^(?:\/[A-Za-z0-9_@+%-][A-Za-z0-9._@+%-]{0,254})+\.wav$/

/**
 * `uuid_record <uuid> start|stop <path>` (mod_commands.c session_record_function: `start` is
 * switch_ivr_record_session, the media bug record_session puts on the leg, so RECORD_START,
 * RECORD_STOP and the channel's RECORD_* variables are the same; `stop` is
 * switch_ivr_stop_record_session by path). Replies, esl/48-uuid-record: `+OK Success`;
 * `-ERR Cannot stop record session!` when nothing records that path on the leg;
 * `-ERR Cannot locate session!` when the leg is gone. The path is the daemon's own
 * (src/recording: `<recording.dir>/<domain>/<id>.wav`), checked here again since it is written into
 * the command.
 */
export function uuidRecord(uuid: string, action: 'start' | 'stop', path: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  if (action !== 'start' && action !== 'stop') return fail('action', 'must be start or stop')
  if (path.length > 1024 || !RECORD_PATH.test(path) || path.split('/').some((seg) => seg === '..' || seg === '.')) {
    return fail('path', 'not an absolute .wav path of the recording alphabet')
  }
  return ok(brand(`uuid_record ${u.value} ${action} ${path}`))
}

/** `uuid_park <uuid>`: FreeSWITCH has it (mod_commands.c park_function, "Park channel"). */
export function uuidPark(uuid: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  return ok(brand(`uuid_park ${u.value}`))
}

/** `uuid_setvar <uuid> <name> <value>` (value in the token alphabet; empty unsets). */
export function uuidSetVar(uuid: string, name: string, value: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  const n = check('varName', 'name', name)
  if (!n.ok) return n
  if (n.value.toLowerCase() === 'origination_nested_vars') return fail('name', 'may not be set')
  const v = check('token', 'value', value)
  if (!v.ok) return v
  return ok(brand(v.value === '' ? `uuid_setvar ${u.value} ${n.value}` : `uuid_setvar ${u.value} ${n.value} ${v.value}`))
}

/** `uuid_getvar <uuid> <name>`: the value, or `_undef_` (mod_commands.c uuid_getvar_function). */
export function uuidGetVar(uuid: string, name: string): Result<EslCommand, CommandError> {
  const u = check('uuid', 'uuid', uuid)
  if (!u.ok) return u
  const n = check('varName', 'name', name)
  if (!n.ok) return n
  return ok(brand(`uuid_getvar ${u.value} ${n.value}`))
}

/** `hupall <cause> <var> <value>`: hangs up every channel whose variable has that value. */
export function hupall(cause: string, variable: string, value: string): Result<EslCommand, CommandError> {
  const c = check('cause', 'cause', cause)
  if (!c.ok) return c
  const n = check('varName', 'variable', variable)
  if (!n.ok) return n
  // An empty value would make hupall_api_function skip the pair and hang up EVERY channel.
  if (value === '') return fail('value', 'must not be empty')
  const v = check('token', 'value', value)
  if (!v.ok) return v
  return ok(brand(`hupall ${c.value} ${n.value} ${v.value}`))
}

/** `hash select/<realm>/<key>`: the value, or nothing when there is none (mod_hash.c; `api` prints `-ERR no reply`). */
export function hashSelect(slot: HashSlot): Result<InstantCommand, CommandError> {
  const s = checkSlot('slot', slot)
  if (!s.ok) return s
  return ok(instant(`hash select/${s.value}`))
}

/** `hash delete/<realm>/<key>`: `+OK`, or `-ERR Not found` (mod_hash.c). */
export function hashDelete(slot: HashSlot): Result<InstantCommand, CommandError> {
  const s = checkSlot('slot', slot)
  if (!s.ok) return s
  return ok(instant(`hash delete/${s.value}`))
}

/**
 * `show channels as json` (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt:
 * `{"row_count":N,"rows":[...]}`).
 */
export const showChannelsJson = (): Result<EslCommand, CommandError> => ok(brand('show channels as json'))

/**
 * `show registrations as json`: one row per registered user and realm, `reg_user`, `realm`,
 * `expires` (epoch seconds) (test/fixtures/freeswitch/esl/27-sofia-register-events.txt).
 */
export const showRegistrationsJson = (): Result<EslCommand, CommandError> => ok(brand('show registrations as json'))

/**
 * `status`: the cheap liveness probe.
 * @internal Exported for tests: tests (test/pbx, test/cti, test/realfs...) send it as a probe.
 */
export const status = (): Result<EslCommand, CommandError> => ok(brand('status'))

/**
 * `fsctl sps` without an argument reads FreeSWITCH's `sessions-per-second` and sets nothing
 * (mod_commands.c ctl_function: the argument is 0, and switch_core.c SCSC_SPS changes the rate
 * only for a positive one); it answers `+OK sessions per second: 30\n`
 * (test/fixtures/freeswitch/esl/35-sessions-per-second.txt; replies.ts parseSessionsPerSecond).
 * Instant: it reads a variable.
 */
export const readSessionsPerSecond = (): Result<InstantCommand, CommandError> => ok(instant('fsctl sps'))

/**
 * A dialplan application for `sendmsg <uuid>` / `execute`. The name travels in a header line,
 * the argument in the message body; FreeSWITCH expands `${...}` in the argument when it runs
 * the application, so `$` is refused, as are control characters.
 */
export function app(name: string, arg = ''): Result<EslApp, CommandError> {
  const n = check('appName', 'name', name)
  if (!n.ok) return n
  if (arg.length > 4096) return fail('arg', 'longer than 4096 characters')
  if (CONTROL.test(arg)) return fail('arg', 'contains a control character')
  if (arg.includes('$')) return fail('arg', 'contains "$" (FreeSWITCH would expand ${...})')
  return ok({ app: n.value, arg } as EslApp)
}

/**
 * end_user → `cod_end_user`: JSON of the known fields, percent-encoded byte by byte except
 * `A-Z a-z 0-9 . _ -` (stricter than encodeURIComponent, which keeps `'` `(` `)` `!` `*` `~`).
 * The result is always in the token alphabet.
 */
export function encodeEndUser(endUser: EndUser): string {
  const picked: Record<string, string> = {}
  for (const k of END_USER_FIELDS) {
    const v = endUser[k]
    if (v !== undefined) picked[k] = v
  }
  return percentEncode(JSON.stringify(picked))
}

/**
 * Free text as a token: its UTF-8 bytes percent-encoded except `A-Z a-z 0-9 . _ -` (stricter
 * than encodeURIComponent, which keeps `~ ' ( ) ! *`). The result is in every value alphabet
 * above (token, appValue); readers decode it with decodeURIComponent. The one encoding of free
 * text for channel variables, here and in the xml_curl documents.
 */
export function percentEncode(text: string): string {
  let out = ''
  for (const b of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(b)
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Reads `cod_end_user` back (dialplan documents, CTI). Unknown keys and non-strings are dropped. */
export function decodeEndUser(encoded: string): Result<EndUser, string> {
  let parsed: unknown
  try {
    parsed = JSON.parse(decodeURIComponent(encoded))
  } catch {
    return err('not percent-encoded JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return err('not a JSON object')
  const out: Record<string, string> = {}
  for (const k of END_USER_FIELDS) {
    const v = (parsed as Record<string, unknown>)[k]
    if (typeof v === 'string') out[k] = v
  }
  return ok(out as EndUser)
}
