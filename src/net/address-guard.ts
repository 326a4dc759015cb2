/**
 * The daemon's one outbound address policy: may a request the daemon makes on someone else's
 * behalf (a result callback, an IVR document, `<GetJSON>`, `<Redirect>`, a prompt URL handed to
 * FreeSWITCH) connect to this IP address?
 *
 * It sits in net/, below every part. The configuration parses the allow-lists with it
 * (`callbacks.allow`, `ivr.fetch_allow`), the one outbound transport (transport.ts) asks it
 * for every address a host resolves to and again when the connection is opened
 * (guarded-connect.ts), and the API asks it about a callback_url's literal host (policy.ts).
 *
 * Those URLs come from API clients and from fetched documents, so they are untrusted. The guard
 * refuses every address that is not a plain public unicast address (loopback, private, CGNAT,
 * link-local, unique-local, multicast, broadcast, reserved, documentation, benchmarking,
 * deprecated IPv4-compatible IPv6, and IPv6 forms that embed a refused IPv4: IPv4-mapped,
 * NAT64 64:ff9b::/96, 6to4 2002::/16), unless the operator allowed the address through the
 * path's allow-list (a list of CIDRs).
 *
 * Cloud metadata endpoints are refused even inside an allowed range: only an allow-list entry
 * naming exactly that host (/32 or /128) unlocks one, so that allowing e.g. 169.254.0.0/16 for
 * a link-local IVR server does not also hand out the machine's cloud credentials.
 *
 * The guard only sees addresses: the transport resolves host names itself and checks every
 * resolved address (odd textual forms such as `http://2130706433/` or `0x7f.1` are normalised to
 * dotted IPv4 by the WHATWG URL parser first, and whatever getaddrinfo makes of a name is
 * checked after resolution).
 */
import { isIP } from 'node:net'
import { ok, err, type Result } from '../util/result.js'

export interface Cidr {
  readonly family: 4 | 6
  /** The network address as an integer (host bits zero). */
  readonly network: bigint
  readonly prefix: number
  /** As the operator wrote it (for logs and messages). */
  readonly text: string
}

export type RefusalReason =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared_address'
  | 'link_local'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'ipv4_compatible'
  | 'metadata'

export type AddressVerdict =
  | { readonly allowed: true; readonly allowListed: boolean }
  | {
      readonly allowed: false
      readonly reason: RefusalReason
      /** Human-readable detail, e.g. "::ffff:7f00:1 embeds 127.0.0.1 (loopback)". */
      readonly detail: string
    }

interface Ip {
  readonly family: 4 | 6
  readonly value: bigint
}

const V4_BITS = 32
const V6_BITS = 128

const bitsOf = (family: 4 | 6): number => (family === 4 ? V4_BITS : V6_BITS)

const parseV4 = (text: string): bigint | undefined => {
  // net.isIP accepts only the canonical dotted quad (no octal/hex/short forms): those are the
  // URL parser's job, and an allow-list entry in such a form is a mistake worth reporting.
  if (isIP(text) !== 4) return undefined
  let v = 0n
  for (const part of text.split('.')) v = (v << 8n) | BigInt(Number(part))
  return v
}

const parseV6 = (input: string): bigint | undefined => {
  if (isIP(input) !== 6) return undefined
  // A zone ("fe80::1%eth0") does not change which range the address is in.
  const text = input.includes('%') ? input.slice(0, input.indexOf('%')) : input
  let groups: string[]
  const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  let head = text
  const tailGroups: string[] = []
  if (tailV4?.[1] !== undefined) {
    const v4 = parseV4(tailV4[1])
    if (v4 === undefined) return undefined
    tailGroups.push(((v4 >> 16n) & 0xffffn).toString(16), (v4 & 0xffffn).toString(16))
    head = text.slice(0, text.length - tailV4[1].length)
    // "::1.2.3.4" leaves "::", "::ffff:1.2.3.4" leaves "::ffff:": drop the separator colon.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1)
  }
  const want = 8 - tailGroups.length
  const double = head.indexOf('::')
  if (double >= 0) {
    const left = head.slice(0, double) === '' ? [] : head.slice(0, double).split(':')
    const right = head.slice(double + 2) === '' ? [] : head.slice(double + 2).split(':')
    const fill = want - left.length - right.length
    if (fill < 0) return undefined
    groups = [...left, ...Array<string>(fill).fill('0'), ...right]
  } else {
    groups = head === '' ? [] : head.split(':')
  }
  groups = [...groups, ...tailGroups]
  if (groups.length !== 8) return undefined
  let v = 0n
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
    v = (v << 16n) | BigInt(parseInt(g, 16))
  }
  return v
}

const parseIp = (text: string): Ip | undefined => {
  const v4 = parseV4(text)
  if (v4 !== undefined) return { family: 4, value: v4 }
  const v6 = parseV6(text)
  if (v6 !== undefined) return { family: 6, value: v6 }
  return undefined
}

const formatV4 = (v: bigint): string =>
  [24n, 16n, 8n, 0n].map((s) => ((v >> s) & 0xffn).toString()).join('.')

const formatV6 = (v: bigint): string => {
  const groups: string[] = []
  for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16))
  return groups.join(':')
}

const contains = (c: Cidr, ip: Ip): boolean =>
  c.family === ip.family && ip.value >> BigInt(bitsOf(c.family) - c.prefix) === c.network >> BigInt(bitsOf(c.family) - c.prefix)

/**
 * Parse one CIDR ("10.0.0.0/8", "fd00::/8") or a bare address (a single host).
 * @internal Exported for tests: test/net checks the CIDR forms one by one.
 */
export const parseCidr = (text: string): Result<Cidr, string> => {
  if (typeof text !== 'string' || text.length === 0) return err('empty entry')
  const slash = text.indexOf('/')
  const addrText = slash < 0 ? text : text.slice(0, slash)
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1)
  if (addrText.includes('%')) return err(`"${text}": a zone (%...) is not allowed in a CIDR`)
  const ip = parseIp(addrText)
  if (ip === undefined) return err(`"${text}": "${addrText}" is not an IPv4 or IPv6 address in standard form`)
  const bits = bitsOf(ip.family)
  let prefix = bits
  if (prefixText !== undefined) {
    if (!/^(0|[1-9]\d{0,2})$/.test(prefixText)) return err(`"${text}": prefix length "${prefixText}" is not a number`)
    prefix = Number(prefixText)
    if (prefix > bits) return err(`"${text}": prefix length ${prefix} is longer than ${bits} bits`)
  }
  const shift = BigInt(bits - prefix)
  const network = (ip.value >> shift) << shift
  if (network !== ip.value) {
    // Host bits set is almost always a typo ("10.0.0.1/8"): say what was probably meant.
    const net = ip.family === 4 ? formatV4(network) : formatV6(network)
    return err(`"${text}": host bits are set (the network is ${net}/${prefix})`)
  }
  return ok({ family: ip.family, network, prefix, text })
}

/**
 * Validate an operator allow-list (`callbacks.allow`, `ivr.fetch_allow`). Config validation uses this, so a
 * bad entry stops the start with the entry and the reason.
 */
export const parseCidrList = (list: readonly string[]): Result<Cidr[], string> => {
  const out: Cidr[] = []
  for (const [i, entry] of list.entries()) {
    const r = parseCidr(entry)
    if (!r.ok) return err(`entry ${i}: ${r.error}`)
    out.push(r.value)
  }
  return ok(out)
}

/** For the constant tables below: a typo there is a programming error, found at load. */
const cidr = (text: string): Cidr => {
  const c = parseCidr(text)
  if (!c.ok) throw new Error(`address-guard table: ${c.error}`)
  return c.value
}

const table = (rows: ReadonlyArray<readonly [string, RefusalReason]>): ReadonlyArray<readonly [Cidr, RefusalReason]> =>
  rows.map(([text, reason]) => [cidr(text), reason] as const)

// IANA IPv4 Special-Purpose Address Registry (RFC 6890 and updates); first match names the reason.
const V4_REFUSED = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared_address'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
])

// IANA IPv6 Special-Purpose Address Registry. Ranges that embed an IPv4 address are handled in
// embeddedV4; anything outside 2000::/3 (the only global unicast block) is refused as reserved.
const V6_REFUSED = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'ipv4_compatible'],
  ['64:ff9b:1::/48', 'private'],
  ['100::/64', 'reserved'],
  ['2001::/23', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'site_local'],
  ['ff00::/8', 'multicast'],
])

const GLOBAL_UNICAST = cidr('2000::/3')

const META = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, Oracle instance metadata
  '169.254.170.2', // AWS ECS task credentials
  '169.254.170.23', // AWS EKS pod identity
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS pod identity over IPv6
  '100.100.100.200', // Alibaba Cloud metadata
  '168.63.129.16', // Azure WireServer: a public-looking address only reachable from inside Azure
].map((a) => {
  const c = cidr(a)
  return { family: c.family, value: c.network }
})

const MAPPED = cidr('::ffff:0:0/96')
const NAT64 = cidr('64:ff9b::/96')
const SIX_TO_FOUR = cidr('2002::/16')

interface Embedded {
  readonly v4: Ip
  readonly form: 'IPv4-mapped' | 'NAT64' | '6to4'
}

/** The IPv4 address an IPv6 address stands for, where the OS or the network will reach it. */
const embeddedV4 = (ip: Ip): Embedded | undefined => {
  if (ip.family !== 6) return undefined
  if (contains(MAPPED, ip)) return { v4: { family: 4, value: ip.value & 0xffffffffn }, form: 'IPv4-mapped' }
  if (contains(NAT64, ip)) return { v4: { family: 4, value: ip.value & 0xffffffffn }, form: 'NAT64' }
  if (contains(SIX_TO_FOUR, ip)) return { v4: { family: 4, value: (ip.value >> 80n) & 0xffffffffn }, form: '6to4' }
  return undefined
}

const isMetadata = (ip: Ip): boolean => META.some((m) => m.family === ip.family && m.value === ip.value)

const classifyV4 = (ip: Ip): RefusalReason | undefined => V4_REFUSED.find(([c]) => contains(c, ip))?.[1]

const classify = (ip: Ip): RefusalReason | undefined => {
  if (ip.family === 4) return classifyV4(ip)
  const hit = V6_REFUSED.find(([c]) => contains(c, ip))
  if (hit !== undefined) return hit[1]
  const emb = embeddedV4(ip)
  if (emb !== undefined) return classifyV4(emb.v4)
  if (!contains(GLOBAL_UNICAST, ip)) return 'reserved'
  return undefined
}

const inAllow = (allow: readonly Cidr[], ip: Ip): boolean => allow.some((c) => contains(c, ip))
const exactlyAllowed = (allow: readonly Cidr[], ip: Ip): boolean =>
  allow.some((c) => c.prefix === bitsOf(c.family) && contains(c, ip))

/**
 * May an outbound request connect to `address` (a literal IP as dns.lookup returns it)?
 * Anything that does not parse as an IP address is refused ("invalid").
 */
export const checkAddress = (address: string, allow: readonly Cidr[]): AddressVerdict => {
  const ip = parseIp(address)
  if (ip === undefined) return { allowed: false, reason: 'invalid', detail: `"${address}" is not an IP address` }
  const emb = embeddedV4(ip)
  // An IPv4-mapped address is the same host as its IPv4 form, so an IPv4 allow-list entry
  // covers it; NAT64/6to4 go through a translator, so only the IPv6 form itself is matched.
  const sameHost = emb?.form === 'IPv4-mapped' ? [ip, emb.v4] : [ip]
  const via = emb !== undefined ? ` (${emb.form} of ${formatV4(emb.v4.value)})` : ''

  if (isMetadata(ip) || (emb !== undefined && isMetadata(emb.v4))) {
    if (sameHost.some((x) => exactlyAllowed(allow, x))) return { allowed: true, allowListed: true }
    return { allowed: false, reason: 'metadata', detail: `${address}${via} is a cloud metadata address` }
  }
  if (sameHost.some((x) => inAllow(allow, x))) return { allowed: true, allowListed: true }
  const reason = classify(ip)
  if (reason === undefined) return { allowed: true, allowListed: false }
  return { allowed: false, reason, detail: `${address}${via} is ${reason.replace(/_/g, '-')}` }
}
