/**
 * The address forms every outbound path is tried with (test/net/outbound-forms.test.ts,
 * test/api/callback-url.test.ts): the textual tricks that mean loopback (decimal, octal, hex,
 * short, trailing dot, percent-encoded, IPv4-mapped/compatible IPv6, NAT64, 6to4, localhost)
 * and one address of every refused range (private, CGNAT, link-local, cloud metadata,
 * multicast, broadcast, unspecified, reserved, unique-local...).
 *
 * `loopback`: the form reaches 127.0.0.1 if the guard let it through, so a canary listening
 * there proves that nothing connected. The others would leave the machine: the guard's answer
 * (refused, with its reason) is what is checked, and no test lets them through.
 */

export interface HostForm {
  /** The URL's authority without the port: `2130706433`, `[::ffff:127.0.0.1]`, `10.0.0.1`. */
  readonly host: string
  /** The reason the guard gives (address-guard.ts RefusalReason). */
  readonly reason: string
  /** Whether the form reaches 127.0.0.1 (so the canary port is used). */
  readonly loopback: boolean
}

const lo = (host: string, reason = 'loopback'): HostForm => ({ host, reason, loopback: true })
const away = (host: string, reason: string): HostForm => ({ host, reason, loopback: false })

export const LITERAL_FORMS: readonly HostForm[] = [
  lo('127.0.0.1'),
  lo('2130706433'),
  lo('0177.0.0.1'),
  lo('0x7f.1'),
  lo('0x7f000001'),
  lo('127.1'),
  lo('127.0.0.1.'),
  lo('%31%32%37.0.0.1'),
  lo('[::ffff:127.0.0.1]'),
  lo('[::ffff:7f00:1]'),
  lo('[0:0:0:0:0:ffff:7f00:1]'),
  lo('[::1]'),
  lo('127.42.0.7'),
  lo('0.0.0.0', 'unspecified'),
  lo('0', 'unspecified'),
  lo('[::]', 'unspecified'),
  lo('[::127.0.0.1]', 'ipv4_compatible'),
  away('10.0.0.1', 'private'),
  away('0xa000001', 'private'),
  away('172.16.0.1', 'private'),
  away('192.168.1.1', 'private'),
  away('100.64.0.1', 'shared_address'),
  away('169.254.1.1', 'link_local'),
  away('169.254.169.254', 'metadata'),
  away('0xa9fea9fe', 'metadata'),
  away('2852039166', 'metadata'),
  away('[::ffff:169.254.169.254]', 'metadata'),
  away('[fd00:ec2::254]', 'metadata'),
  away('100.100.100.200', 'metadata'),
  away('168.63.129.16', 'metadata'),
  away('224.0.0.1', 'multicast'),
  away('255.255.255.255', 'broadcast'),
  away('240.0.0.1', 'reserved'),
  away('198.18.0.1', 'benchmarking'),
  away('[fe80::1]', 'link_local'),
  away('[fc00::1]', 'unique_local'),
  away('[ff02::1]', 'multicast'),
  away('[64:ff9b::7f00:1]', 'loopback'),
  away('[64:ff9b::a9fe:a9fe]', 'metadata'),
  away('[2002:7f00:1::]', 'loopback'),
  away('[2002:a00:1::1]', 'private'),
]

/** Host names and what a resolver answers for them: each is refused after resolution. */
export const RESOLVED_FORMS: ReadonlyArray<{ readonly name: string; readonly addresses: readonly string[]; readonly reason: string }> = [
  { name: 'loopback.example.test', addresses: ['127.0.0.1'], reason: 'loopback' },
  { name: 'v6-loopback.example.test', addresses: ['::1'], reason: 'loopback' },
  { name: 'private.example.test', addresses: ['10.1.2.3'], reason: 'private' },
  { name: 'metadata.example.test', addresses: ['169.254.169.254'], reason: 'metadata' },
  { name: 'mapped.example.test', addresses: ['::ffff:127.0.0.1'], reason: 'loopback' },
  { name: 'nat64.example.test', addresses: ['64:ff9b::a00:1'], reason: 'private' },
  { name: 'ula.example.test', addresses: ['fd12:3456::1'], reason: 'unique_local' },
  // One bad address among good ones refuses the host: which one a connection would use is not ours to pick.
  { name: 'mixed.example.test', addresses: ['93.184.216.34', '127.0.0.1'], reason: 'loopback' },
]
