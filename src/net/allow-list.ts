/**
 * The operator's allow-lists as the guard reads them. The configuration keeps each list as the
 * strings the operator wrote (validated at load with parseCidrList), and a reload (SIGHUP)
 * replaces the array: parsing is memoised per array, so reading the list on every connection
 * costs a map lookup and a reload applies to the next connection.
 */
import { parseCidrList, type Cidr } from './address-guard.js'

const parsed = new WeakMap<readonly string[], readonly Cidr[]>()

/**
 * The CIDRs of a validated list. A list that does not parse (impossible after config
 * validation) allows nothing: the guard fails closed.
 */
export function allowListOf(entries: readonly string[]): readonly Cidr[] {
  let cidrs = parsed.get(entries)
  if (cidrs === undefined) {
    const r = parseCidrList(entries)
    cidrs = r.ok ? r.value : []
    parsed.set(entries, cidrs)
  }
  return cidrs
}
