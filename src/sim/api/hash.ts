/**
 * mod_hash's `hash` API as FreeSWITCH 1.10 runs it (mod_hash.c hash_api_function): the argument
 * is split on `/` into at most 4 parts, `<op>/<realm>/<key>[/<value>]`, and the entry is kept
 * under `<realm>_<key>` for the life of the switch process. The daemon's legs record their fate
 * there (api_on_answer, api_hangup_hook: src/pbx/leg-record.ts).
 */
import type { Switch } from '../core/switch.js'
import { separateString } from '../text/fs-strings.js'

const USAGE = '-ERR Usage: hash [insert|delete|select]/<realm>/<key>/<val>\n'

/** One table per simulated switch, as FreeSWITCH has one per process. */
const tables = new WeakMap<Switch, Map<string, string>>()

const tableOf = (sw: Switch): Map<string, string> => {
  let t = tables.get(sw)
  if (t === undefined) tables.set(sw, (t = new Map()))
  return t
}

/** `hash insert|insert_ifempty|delete|delete_ifmatch|select/...`: the reply texts of mod_hash.c. */
export function hashApi(sw: Switch, arg: string): string {
  const argv = arg === '' ? [] : separateString(arg, '/', 4)
  if (argv.length < 3 || argv[0] === undefined) return USAGE
  const [op, realm, key, value] = argv as [string, string, string, string | undefined]
  const t = tableOf(sw)
  const k = `${realm}_${key}`
  switch (op.toLowerCase()) {
    case 'insert':
      if (value === undefined) return USAGE
      t.set(k, value)
      return '+OK\n'
    case 'insert_ifempty':
      if (value === undefined) return USAGE
      if (t.has(k)) return '-ERR key already exists\n'
      t.set(k, value)
      return '+OK\n'
    case 'delete':
      return t.delete(k) ? '+OK\n' : '-ERR Not found\n'
    case 'delete_ifmatch': {
      if (value === undefined) return USAGE
      const v = t.get(k)
      if (v === undefined) return '-ERR Not found\n'
      if (v !== value) return "-ERR Doesn't match\n"
      t.delete(k)
      return '+OK\n'
    }
    case 'select':
      return t.get(k) ?? ''
    default:
      return USAGE
  }
}
