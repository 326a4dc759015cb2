/**
 * The channel-variable applications (mod_dptools.c set, export, unset, multiset): how their
 * `name=value` arguments are read and where an exported variable goes.
 */
import type { Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'

/** `name=value` (mod_dptools.c set_function): no `=` or an empty value unsets. */
function splitAssignment(arg: string): [string, string] | undefined {
  const eq = arg.indexOf('=')
  const name = (eq < 0 ? arg : arg.slice(0, eq)).trim()
  if (name === '') return undefined
  return [name, eq < 0 ? '' : arg.slice(eq + 1)]
}

/** set name=value */
export function setVar(s: Session, arg: string): void {
  const kv = splitAssignment(arg)
  if (kv !== undefined) s.setVar(kv[0], kv[1])
}

/** multiset name=value name2=value2 ... */
export function multiset(s: Session, arg: string): void {
  for (const item of separateString(arg, ' ')) setVar(s, item)
}

/**
 * `export [nolocal:]name=value` (mod_dptools.c export_function → switch_channel_export_variable_var_check):
 * the value is stored on the channel under the name as written (so `nolocal:X` is its own
 * variable and the calling channel's `X` is untouched), and that name is appended to
 * `export_vars`; switch_channel_process_export strips `nolocal:` when it copies the value to
 * the new legs.
 */
export function exportVar(s: Session, arg: string): void {
  const kv = splitAssignment(arg)
  if (kv === undefined) return
  const [written, value] = kv
  s.setVar(written, value)
  const list = (s.getVar('export_vars') ?? '').split(',').filter((x) => x !== '')
  if (!list.includes(written)) list.push(written)
  s.setVar('export_vars', list.join(','))
}
