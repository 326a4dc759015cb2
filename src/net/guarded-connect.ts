/**
 * The guard inside the connection itself: the `connect` function undici's Agent calls whenever
 * it opens a socket to an origin. Together with the transport (transport.ts) it makes
 * "resolve once, check every address, connect to the address that was checked" hold for every
 * request of every pool:
 *
 * - the transport resolves a request's host ONCE and checks every address before the request
 *   is dispatched, then pins the checked addresses here (PinTable) for as long as it runs;
 * - when undici opens a connection for it, node's net/tls call the `lookup` hook below instead
 *   of DNS: it answers with the pinned addresses only (checked again against the allow-list as
 *   it is now), so node connects to those and never resolves again: a DNS answer that changes
 *   between check and connect (rebinding) cannot slip in. A host with nothing pinned gets no
 *   address at all: the guard fails closed;
 * - node skips the lookup hook for an IP literal, so a literal is checked in `connect` itself;
 * - TLS keeps the host name for SNI and the certificate check (undici derives `servername` from
 *   the host, never from the pinned address).
 *
 * A refusal reaches the request as an OutboundFailure carrying the reason: undici passes a
 * connect error through to the requests waiting for that connection unchanged.
 */
import type { LookupAddress, LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { buildConnector } from 'undici'
import { OutboundFailure } from './outbound-error.js'
import { bareHostname, checkAll, type OutboundPolicy, type PinnedAddress } from './policy.js'

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void
export type LookupHook = (hostname: string, options: LookupOptions, callback: LookupCallback) => void

/**
 * Answers with the given (checked) addresses only, in the form node asked for (`all`, `family`).
 * @internal Exported for tests: test/ivr/fetch checks the pinned answer.
 */
export const pinnedLookup =
  (addresses: readonly PinnedAddress[]): LookupHook =>
  (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
    const first = wanted[0]
    if (first === undefined) {
      const e: NodeJS.ErrnoException = new Error(`no checked address of the requested family for ${hostname}`)
      e.code = 'ENOTFOUND'
      callback(e, '')
      return
    }
    if (options.all === true) callback(null, wanted.map((a) => ({ address: a.address, family: a.family })))
    else callback(null, first.address, first.family)
  }

/**
 * The checked addresses of the hosts that requests are running for. Each running request holds
 * its host's entry (the latest checked answer wins: every entry was checked); the entry goes
 * when the last request for that host ends, so the table stays as small as the work in flight.
 */
export class PinTable {
  private readonly pins = new Map<string, { addresses: readonly PinnedAddress[]; holders: number }>()

  /** Pins `addresses` for `host` until the returned release is called (once). */
  hold(host: string, addresses: readonly PinnedAddress[]): () => void {
    const entry = this.pins.get(host)
    if (entry === undefined) this.pins.set(host, { addresses, holders: 1 })
    else {
      entry.addresses = addresses
      entry.holders++
    }
    let released = false
    return () => {
      if (released) return
      released = true
      const e = this.pins.get(host)
      if (e === undefined) return
      if (--e.holders <= 0) this.pins.delete(host)
    }
  }

  get(host: string): readonly PinnedAddress[] | undefined {
    return this.pins.get(host)?.addresses
  }

  get size(): number {
    return this.pins.size
  }
}

export interface GuardedConnectorOptions {
  readonly policy: OutboundPolicy
  readonly pins: PinTable
  /** Bounds one TCP/TLS connect. */
  readonly connectTimeoutMs: number
  /** Trusted CA certificates for https (replaces the default roots). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
}

export function guardedConnector(o: GuardedConnectorOptions): buildConnector.connector {
  /** node's lookup hook: the pinned addresses, checked again; never DNS. */
  const lookup: LookupHook = (hostname, options, callback) => {
    const pinned = o.pins.get(hostname)
    if (pinned === undefined) {
      callback(new OutboundFailure({ kind: 'dns', message: `${hostname}: no checked address to connect to` }), '')
      return
    }
    const checked = checkAll(
      hostname,
      pinned.map((p) => p.address),
      o.policy,
    )
    if (!checked.ok) callback(new OutboundFailure(checked.error), '')
    else pinnedLookup(checked.value)(hostname, options, callback)
  }

  const base = buildConnector({
    timeout: o.connectTimeoutMs,
    lookup,
    ...(o.ca !== undefined ? { ca: typeof o.ca === 'string' || Buffer.isBuffer(o.ca) ? o.ca : [...o.ca] } : {}),
  })

  return (options, callback) => {
    const host = bareHostname(options.hostname)
    if (isIP(host) !== 0) {
      // node skips the lookup hook for an IP literal: the literal itself is checked here.
      const checked = checkAll(host, [host], o.policy)
      if (!checked.ok) {
        callback(new OutboundFailure(checked.error), null)
        return
      }
    }
    base(options, callback)
  }
}
