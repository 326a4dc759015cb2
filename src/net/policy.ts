/**
 * One outbound policy: the address guard, the operator's allow-list for one purpose and the
 * resolver, together with the two questions every outbound path asks of them.
 *
 * - resolveChecked(host): the host resolved ONCE, every address checked. A literal IP is
 *   checked as it is (no DNS). The answer is what the connection may use and nothing else.
 * - literalVerdict(url): what can be said of a URL without DNS (an IP literal, or a
 *   `localhost` name, which always means loopback: RFC 6761 section 6.3). The API uses it to
 *   refuse a callback_url at request time; a host name is only judged when it is resolved.
 *
 * URLs reach here parsed by the WHATWG URL parser, which already turned the odd textual forms
 * of IPv4 (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, a trailing dot) into dotted quads,
 * so the guard only ever sees canonical addresses.
 */
import { lookup as dnsLookup } from 'node:dns'
import { isIP } from 'node:net'
import { err, ok, type Result } from '../util/result.js'
import { checkAddress, type AddressVerdict, type Cidr } from './address-guard.js'
import type { OutboundError } from './outbound-error.js'

/** Host name to all its addresses. */
export type Resolver = (host: string) => Promise<string[]>

export interface OutboundPolicy {
  /** The allow-list, read at each check (a reload applies to the next connection). */
  readonly allow: () => readonly Cidr[]
  /** Its configuration key, named in every refusal (`callbacks.allow`, `ivr.fetch_allow`). */
  readonly setting: string
  readonly resolver: Resolver
}

export interface PinnedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** The system resolver (getaddrinfo), all addresses. */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (e, addresses) => {
      if (e !== null) reject(e)
      else resolve(addresses.map((a) => a.address))
    })
  })

/** URL.hostname keeps IPv6 literals in brackets; lookups and the guard want them bare. */
export const bareHostname = (hostname: string): string =>
  hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname

const refusal = (v: Extract<AddressVerdict, { allowed: false }>, what: string, setting: string): OutboundError => ({
  kind: 'refused',
  reason: v.reason,
  message: `${what}: not allowed (operator allow-list: ${setting})`,
})

/** Every address of `host` checked; the first refused one refuses the whole host. */
export function checkAll(host: string, addresses: readonly string[], policy: OutboundPolicy): Result<PinnedAddress[], OutboundError> {
  if (addresses.length === 0) return err({ kind: 'dns', message: `cannot resolve ${host}: no address` })
  const allow = policy.allow()
  const pinned: PinnedAddress[] = []
  for (const address of addresses) {
    const v = checkAddress(address, allow)
    if (!v.allowed) return err(refusal(v, address === host ? v.detail : `${host} resolves to ${v.detail}`, policy.setting))
    pinned.push({ address, family: isIP(address) === 6 ? 6 : 4 })
  }
  return ok(pinned)
}

/**
 * `host` (bare: no brackets) resolved once and checked. Resolver failures are `dns` errors
 * with the resolver's code (ENOTFOUND...). The caller bounds the time (the resolver may hang).
 */
export async function resolveChecked(host: string, policy: OutboundPolicy): Promise<Result<PinnedAddress[], OutboundError>> {
  if (isIP(host) !== 0) return checkAll(host, [host], policy)
  let addresses: string[]
  try {
    addresses = await policy.resolver(host)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))
    return err({ kind: 'dns', message: `cannot resolve ${host}: ${code}` })
  }
  return checkAll(host, addresses, policy)
}

const LOCALHOST = /(^|\.)localhost\.?$/i

/**
 * What the policy says of a URL's host without asking DNS: `refused` for an IP literal or a
 * localhost name it refuses, `allowed` for one it allows, `name` when only resolution can tell.
 */
export function literalVerdict(
  url: URL,
  allow: readonly Cidr[],
): { readonly kind: 'allowed' } | { readonly kind: 'name' } | { readonly kind: 'refused'; readonly reason: string; readonly detail: string } {
  const host = bareHostname(url.hostname)
  // localhost names are loopback whatever a resolver says (RFC 6761 6.3): both families.
  const addresses = isIP(host) !== 0 ? [host] : LOCALHOST.test(host) ? ['127.0.0.1', '::1'] : undefined
  if (addresses === undefined) return { kind: 'name' }
  for (const a of addresses) {
    const v = checkAddress(a, allow)
    if (!v.allowed) return { kind: 'refused', reason: v.reason, detail: a === host ? v.detail : `${host} resolves to ${v.detail}` }
  }
  return { kind: 'allowed' }
}
