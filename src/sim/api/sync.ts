/**
 * API commands that answer at once (`api` / `bgapi` and `${api(args)}`), with FreeSWITCH's reply
 * texts: mod_commands.c (kill_function, uuid_bridge_function, transfer_function,
 * uuid_setvar/getvar/exists/answer, park_function, hupall_api_function, global_getvar, status,
 * show), mod_hash.c (hash_api_function) and mod_sofia.c (sofia_contact_function). Captures: sessions
 * 01, 03, 20, 22, 23, 24 in test/fixtures/freeswitch/esl/.
 */
import type { Switch } from '../core/switch.js'
import { str2cause } from '../model/causes.js'
import { separateString } from '../text/fs-strings.js'
import { hashApi } from './hash.js'
import { usage, type ApiReply } from './reply.js'
import { show } from './show.js'

/** status_function: uptime and the session counters. */
function status(sw: Switch): string {
  let ms = Date.now() - sw.startedAt
  const d = Math.floor(ms / 86400000)
  ms -= d * 86400000
  const h = Math.floor(ms / 3600000)
  ms -= h * 3600000
  const m = Math.floor(ms / 60000)
  ms -= m * 60000
  const sec = Math.floor(ms / 1000)
  ms -= sec * 1000
  const n = sw.sessions.size
  const rate = sw.sessionRate.stats()
  return (
    `UP 0 years, ${d} days, ${h} hours, ${m} minutes, ${sec} seconds, ${ms} milliseconds, 0 microseconds\n` +
    'FreeSWITCH (Version 1.10.12-release  64bit) is ready\n' +
    `${sw.sessionsSinceStartup} session(s) since startup\n` +
    `${n} session(s) - peak ${sw.peakSessions}, last 5min ${sw.peakSessions} \n` +
    `${rate.last} session(s) per Sec out of max ${rate.total}, peak ${rate.peak}, last 5min ${rate.peak} \n` +
    '1000 session(s) max\n' +
    'min idle cpu 0.00/99.00\n' +
    'Current Stack Size/Max 240K/8192K\n'
  )
}

/** sofia_contact [profile/]user@domain: registered contacts, comma-joined, or error/user_not_registered. */
function sofiaContact(sw: Switch, arg: string): string {
  if (arg === '') return ''
  const slash = arg.indexOf('/')
  const userPart = slash < 0 ? arg : arg.slice(slash + 1)
  const at = userPart.indexOf('@')
  const user = at < 0 ? userPart : userPart.slice(0, at)
  const domain = at < 0 ? (sw.globals.get('domain') ?? '') : userPart.slice(at + 1)
  const contacts = sw.registry.contacts(domain, user).map((c) => `sofia/${sw.profile}/${c}`)
  return contacts.length === 0 ? 'error/user_not_registered' : contacts.join(',')
}

/** Commands that answer at once (also used for `${api(args)}` expansion). */
export function syncApi(sw: Switch, cmd: string, arg: string): ApiReply | undefined {
  switch (cmd) {
    case 'status':
      return { text: status(sw) }
    case 'sofia_contact':
      return { text: sofiaContact(sw, arg) }
    case 'global_getvar':
      return { text: arg === '' ? [...sw.globals].map(([k, v]) => `${k}=${v}`).join('\n') + '\n' : (sw.globals.get(arg) ?? '') }
    case 'hostname':
      return { text: sw.bus.identity.hostname }
    case 'version':
      return { text: 'FreeSWITCH Version 1.10.12-release~64bit (-release 64bit)\n' }
    case 'show':
      return { text: show(sw, arg) }
    case 'uuid_exists':
      return { text: arg !== '' && sw.sessions.has(arg) ? 'true' : 'false' }
    case 'uuid_kill': {
      if (arg === '') return usage('<uuid> [cause]')
      const sp = arg.indexOf(' ')
      const uuid = sp < 0 ? arg : arg.slice(0, sp)
      const cause = sp < 0 ? 'NORMAL_CLEARING' : str2cause(arg.slice(sp + 1).trim())
      const s = sw.sessions.get(uuid)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      sw.hangup(s, cause)
      return { text: '+OK\n' }
    }
    case 'uuid_bridge': {
      const a = separateString(arg, ' ', 4)
      if (arg === '' || a.length < 2) return usage('<uuid> <other_uuid>')
      if (sw.uuidBridge(a[0] as string, a[1] as string)) return { text: `+OK ${a[1] as string}\n` }
      if (a[2] !== undefined && sw.uuidBridge(a[0] as string, a[2])) return { text: `+OK ${a[2]}\n` }
      return { text: '-ERR Invalid uuid\n' }
    }
    case 'uuid_transfer': {
      const syntax = '<uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]'
      if (arg === '') return usage(syntax)
      const a = separateString(arg, ' ', 5)
      if (a.length < 2 || a.length > 5) return usage(syntax)
      let s = sw.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      let rest = a.slice(1)
      if ((rest[0] ?? '').startsWith('-')) {
        const flag = (rest[0] as string).slice(1).toLowerCase()
        rest = rest.slice(1)
        const other = s.bridge === undefined ? undefined : s.bridge.a === s ? s.bridge.b : s.bridge.a
        if (flag === 'bleg' && other !== undefined) s = other
        else if (flag === 'both' && other !== undefined) sw.transfer(other, rest[0] ?? '', rest[1], rest[2])
      }
      if (rest[0] === undefined || rest[0] === '') return usage(syntax)
      sw.transfer(s, rest[0], rest[1], rest[2])
      return { text: '+OK\n' }
    }
    case 'uuid_setvar': {
      const a = separateString(arg, ' ', 3)
      if ((a.length !== 2 && a.length !== 3) || a[0] === '') return usage('<uuid> <var> [value]')
      const s = sw.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      if (a[1] === '') return { text: '-ERR No variable specified\n' }
      s.setVar(a[1] as string, a[2])
      if (a[1] === 'presence_id') s.presenceId = a[2]
      return { text: '+OK\n' }
    }
    case 'uuid_getvar': {
      const a = separateString(arg, ' ', 4)
      if (a.length < 2 || a[0] === '') return usage('<uuid> <var>')
      const s = sw.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      return { text: s.getVar(a[1] as string) ?? '_undef_' }
    }
    case 'uuid_answer': {
      const s = sw.sessions.get(arg)
      if (s === undefined || !s.up) return { text: '-ERROR\n' }
      sw.answer(s)
      return { text: '+OK\n' }
    }
    case 'uuid_recv_dtmf': {
      // mod_commands.c uuid_recv_dtmf_function (34-call-commands.txt).
      const a = separateString(arg, ' ', 2)
      if (a.length < 2 || a[0] === '' || a[1] === '') return usage('<uuid> <dtmf_data>')
      const s = sw.sessions.get(a[0] as string)
      if (s === undefined) return { text: '-ERR Cannot locate session!\n' }
      sw.receiveDtmf(s, (a[1] as string).replace(/[^0-9*#A-Da-dwW]/g, ''), 'APP')
      return { text: `+OK ${a[0] as string} received DTMF ${a[1] as string}.\n` }
    }
    case 'uuid_hold': {
      // mod_commands.c uuid_hold_function: an unknown uuid is "+OK Success" too (switch_ivr_hold_uuid; 34-call-commands.txt).
      const a = separateString(arg, ' ', 4)
      if (arg === '' || a.length < 1 || a[0] === '') return usage('[off|toggle] <uuid> [<display>]')
      const off = (a[0] as string).toLowerCase() === 'off'
      const s = sw.sessions.get((off ? a[1] : a[0]) ?? '')
      if (s !== undefined && !sw.hold(s, !off)) return { text: '-ERR Operation failed\n' }
      return { text: '+OK Success\n' }
    }
    case 'uuid_park': {
      if (arg === '') return usage('<uuid>')
      const s = sw.sessions.get(arg)
      if (s === undefined) return { text: '-ERR No such channel!\n' }
      sw.requestStep(s, { kind: 'park' })
      return { text: '+OK\n' }
    }
    case 'hupall':
      return { text: hupall(sw, arg) }
    case 'hash':
      return { text: hashApi(sw, arg) }
    case 'fsctl':
      // `fsctl shutdown` answers +OK, then the switch shuts down (esl/26-fsctl-shutdown.txt).
      if (arg.trim() === 'shutdown') return { text: '+OK\n', after: () => sw.requestShutdown() }
      {
        const sps = fsctlSps(sw, arg)
        return sps === undefined ? usage('[shutdown|sps [num]]') : { text: sps }
      }
    default:
      return undefined
  }
}

/**
 * `fsctl sps [N]`: a positive N sets sessions-per-second; the answer is the rate in force
 * (mod_commands.c ctl_function; test/fixtures/freeswitch/esl/35-sessions-per-second.txt).
 * Undefined for another fsctl command.
 */
function fsctlSps(sw: Switch, arg: string): string | undefined {
  const [name, value] = arg.trim().split(/\s+/)
  if (name?.toLowerCase() !== 'sps') return undefined
  // atoi: leading digits, else 0 (which reads without setting).
  const n = parseInt(value ?? '0', 10)
  return `+OK sessions per second: ${sw.sessionRate.control(Number.isNaN(n) ? 0 : n)}\n`
}

/**
 * hupall <cause> [<var> <value>]...: the same reply whether or not anything matched
 * (test/fixtures/freeswitch/esl/20-hupall-request-id.txt and 22-misc-replies.txt).
 */
function hupall(sw: Switch, arg: string): string {
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
  for (const s of [...sw.sessions.values()]) {
    if (!s.up) continue
    if (vars.every(([k, v]) => s.getVar(k) === v)) sw.hangup(s, cause)
  }
  if (vars.length === 0) return `+OK hangup all channels with cause ${cause}\n`
  const [k, v] = vars[0] as [string, string]
  return vars.length === 1 ? `+OK hangup all channels matching [${k}]=[${v}] with cause: ${cause}\n` : `+OK hangup all channels matching [${k}]=[${v}]... with cause: ${cause}\n`
}
