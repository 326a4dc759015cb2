import t from 'tap'
import { checkAddress, parseCidr, parseCidrList, type Cidr } from '../../src/net/address-guard.js'

const cidrs = (...list: string[]): Cidr[] => {
  const r = parseCidrList(list)
  if (!r.ok) throw new Error(r.error)
  return r.value
}

/** The reason an address is refused ('allowed' when it is not). */
const reasonOf = (address: string, allow: Cidr[] = []): string => {
  const v = checkAddress(address, allow)
  return v.allowed ? 'allowed' : v.reason
}

t.test('IPv4 special ranges are refused, each for its reason', async (t) => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared_address'],
    ['100.127.255.255', 'shared_address'],
    ['169.254.1.1', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.99', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
  ]
  for (const [a, r] of cases) t.equal(reasonOf(a), r, a)
})

t.test('public IPv4 addresses, including neighbours of refused ranges, pass', async (t) => {
  for (const a of ['8.8.8.8', '93.184.216.34', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '11.0.0.0', '9.255.255.255', '1.1.1.1', '223.255.255.255', '192.169.0.1']) {
    t.same(checkAddress(a, []), { allowed: true, allowListed: false }, a)
  }
})

t.test('IPv6 special ranges are refused', async (t) => {
  const cases: Array<[string, string]> = [
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fec0::1', 'site_local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['2001:2::1', 'reserved'], // benchmarking
    ['4000::1', 'reserved'], // outside 2000::/3
    ['64:ff9b:1::1', 'private'], // local-use NAT64
    ['::ffff:0:7f00:1', 'reserved'], // IPv4-translated (RFC 2765)
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
  ]
  for (const [a, r] of cases) t.equal(reasonOf(a), r, a)
})

t.test('public IPv6 addresses pass', async (t) => {
  for (const a of ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e', '2001:200::1']) {
    t.same(checkAddress(a, []), { allowed: true, allowListed: false }, a)
  }
})

t.test('IPv4-mapped and -compatible IPv6 forms of refused addresses are refused', async (t) => {
  t.equal(reasonOf('::ffff:127.0.0.1'), 'loopback', '::ffff:127.0.0.1')
  t.equal(reasonOf('::ffff:7f00:1'), 'loopback', '::ffff:7f00:1')
  t.equal(reasonOf('0:0:0:0:0:ffff:7f00:0001'), 'loopback', '0:0:0:0:0:ffff:7f00:0001')
  t.equal(reasonOf('::ffff:10.1.2.3'), 'private', '::ffff:10.1.2.3')
  t.equal(reasonOf('::ffff:a9fe:a9fe'), 'metadata', '::ffff:a9fe:a9fe')
  t.equal(reasonOf('::ffff:169.254.169.254'), 'metadata', '::ffff:169.254.169.254')
  // IPv4-compatible addresses are deprecated (RFC 4291): refused whatever they embed.
  t.equal(reasonOf('::127.0.0.1'), 'ipv4_compatible', '::127.0.0.1')
  t.equal(reasonOf('::7f00:1'), 'ipv4_compatible', '::7f00:1')
  t.equal(reasonOf('::8.8.8.8'), 'ipv4_compatible', '::8.8.8.8')
  // The mapped form of a public address is that public address.
  t.equal(checkAddress('::ffff:8.8.8.8', []).allowed, true)
  const v = checkAddress('::ffff:7f00:1', [])
  t.match(v, { allowed: false, detail: /IPv4-mapped of 127\.0\.0\.1/ })
})

t.test('NAT64 and 6to4 addresses are judged by the IPv4 address they embed', async (t) => {
  t.equal(reasonOf('64:ff9b::7f00:1'), 'loopback', '64:ff9b::7f00:1')
  t.equal(reasonOf('64:ff9b::127.0.0.1'), 'loopback', '64:ff9b::127.0.0.1')
  t.equal(reasonOf('64:ff9b::a00:1'), 'private', '64:ff9b::a00:1')
  t.equal(reasonOf('64:ff9b::a9fe:a9fe'), 'metadata', '64:ff9b::a9fe:a9fe')
  t.equal(checkAddress('64:ff9b::808:808', []).allowed, true, 'NAT64 of 8.8.8.8')
  t.equal(reasonOf('2002:7f00:1::'), 'loopback', '2002:7f00:1::')
  t.equal(reasonOf('2002:c0a8:101::1'), 'private', '2002:c0a8:101::1')
  t.equal(reasonOf('2002:a9fe:a9fe::1'), 'metadata', '2002:a9fe:a9fe::1')
  t.equal(checkAddress('2002:808:808::1', []).allowed, true, '6to4 of 8.8.8.8')
  t.match(checkAddress('2002:7f00:1::', []), { detail: /6to4 of 127\.0\.0\.1/ })
})

t.test('anything that is not an IP address is refused', async (t) => {
  for (const a of ['', 'localhost', '2130706433', '0177.0.0.1', '0x7f.1', '127.1', '[::1]', '1.2.3.4.5', '::ffff:1.2.3', 'gggg::1']) {
    t.equal(reasonOf(a), 'invalid', a)
  }
})

t.test('the allow-list lets chosen ranges through', async (t) => {
  const allow = cidrs('127.0.0.1/32', '10.1.0.0/16', 'fd00:1234::/32')
  t.same(checkAddress('127.0.0.1', allow), { allowed: true, allowListed: true })
  t.equal(reasonOf('127.0.0.2', allow), 'loopback', '127.0.0.2')
  t.same(checkAddress('10.1.200.3', allow), { allowed: true, allowListed: true })
  t.equal(reasonOf('10.2.0.1', allow), 'private', '10.2.0.1')
  t.same(checkAddress('fd00:1234:ffff::1', allow), { allowed: true, allowListed: true })
  t.equal(reasonOf('fd00:1235::1', allow), 'unique_local', 'fd00:1235::1')
  // The IPv4-mapped form is the same host, so the IPv4 entry covers it...
  t.same(checkAddress('::ffff:127.0.0.1', allow), { allowed: true, allowListed: true })
  // ...but not the deprecated compatible form, nor NAT64/6to4 (reached through a translator).
  t.equal(reasonOf('::127.0.0.1', allow), 'ipv4_compatible', '::127.0.0.1')
  t.equal(reasonOf('64:ff9b::7f00:1', allow), 'loopback', '64:ff9b::7f00:1')
  t.equal(reasonOf('2002:7f00:1::', allow), 'loopback', '2002:7f00:1::')
  // An allow-listed public address is reported as such.
  t.same(checkAddress('8.8.8.8', cidrs('8.8.8.0/24')), { allowed: true, allowListed: true })
  const v6 = cidrs('::1/128')
  t.same(checkAddress('::1', v6), { allowed: true, allowListed: true })
  t.equal(reasonOf('127.0.0.1', v6), 'loopback', '127.0.0.1')
})

t.test('metadata addresses need an exact allow-list entry', async (t) => {
  t.equal(reasonOf('169.254.169.254', cidrs('169.254.0.0/16')), 'metadata', '169.254.169.254')
  t.equal(reasonOf('169.254.169.254', cidrs('0.0.0.0/0')), 'metadata', '169.254.169.254')
  t.equal(reasonOf('fd00:ec2::254', cidrs('fd00::/8')), 'metadata', 'fd00:ec2::254')
  t.equal(reasonOf('::ffff:169.254.169.254', cidrs('169.254.0.0/16')), 'metadata', '::ffff:169.254.169.254')
  t.same(checkAddress('169.254.1.1', cidrs('169.254.0.0/16')), { allowed: true, allowListed: true })
  t.same(checkAddress('169.254.169.254', cidrs('169.254.169.254/32')), { allowed: true, allowListed: true })
  t.same(checkAddress('169.254.169.254', cidrs('169.254.169.254')), { allowed: true, allowListed: true })
  t.same(checkAddress('fd00:ec2::254', cidrs('fd00:ec2::254/128')), { allowed: true, allowListed: true })
})

t.test('parseCidr accepts IPv4 and IPv6 CIDRs and bare addresses', async (t) => {
  t.match(parseCidr('127.0.0.1/32'), { ok: true, value: { family: 4, prefix: 32, network: 0x7f000001n } })
  t.match(parseCidr('10.0.0.0/8'), { ok: true, value: { family: 4, prefix: 8, network: 0x0a000000n } })
  t.match(parseCidr('0.0.0.0/0'), { ok: true, value: { prefix: 0, network: 0n } })
  t.match(parseCidr('192.168.1.7'), { ok: true, value: { family: 4, prefix: 32 } })
  t.match(parseCidr('fd00::/8'), { ok: true, value: { family: 6, prefix: 8, network: 0xfdn << 120n } })
  t.match(parseCidr('::1'), { ok: true, value: { family: 6, prefix: 128, network: 1n } })
  t.match(parseCidr('::ffff:10.0.0.0/104'), { ok: true, value: { family: 6, prefix: 104 } })
  t.match(parseCidr('::/0'), { ok: true, value: { family: 6, prefix: 0 } })
})

t.test('malformed CIDRs are refused with the entry and the reason', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['10.0.0.0/33', /longer than 32/],
    ['::/129', /longer than 128/],
    ['10.0.0.0/', /not a number/],
    ['10.0.0.0/-1', /not a number/],
    ['10.0.0.0/08', /not a number/],
    ['10.0.0.0/8/8', /not a number/],
    ['10.0.0.0/ 8', /not a number/],
    ['10.0.0.1/8', /host bits are set \(the network is 10\.0\.0\.0\/8\)/],
    ['fd00::1/8', /host bits are set/],
    ['300.0.0.0/8', /not an IPv4 or IPv6/],
    ['10.0.0/8', /not an IPv4 or IPv6/],
    ['0177.0.0.1/32', /not an IPv4 or IPv6/],
    ['0x7f.0.0.1/32', /not an IPv4 or IPv6/],
    ['localhost', /not an IPv4 or IPv6/],
    [' 10.0.0.0/8', /not an IPv4 or IPv6/],
    ['[::1]/128', /not an IPv4 or IPv6/],
    ['fe80::%eth0/64', /zone/],
  ]
  for (const [text, why] of bad) {
    const r = parseCidr(text)
    t.match(r, { ok: false, error: why }, JSON.stringify(text))
  }
  const list = parseCidrList(['127.0.0.1/32', '10.0.0.1/8'])
  t.match(list, { ok: false, error: /^entry 1: "10\.0\.0\.1\/8": host bits/ })
  t.match(parseCidrList([]), { ok: true, value: [] })
  t.match(parseCidrList(['127.0.0.1/32', '::1/128']), { ok: true, value: [{ family: 4 }, { family: 6 }] })
})
