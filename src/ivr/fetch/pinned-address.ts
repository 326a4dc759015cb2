/**
 * The addresses a request may connect to: the host is resolved here (all addresses), EVERY
 * address must pass the address guard, and the connection is pinned to the checked addresses
 * through the request's `lookup` hook, so a DNS answer that changes between check and connect
 * (DNS rebinding) cannot redirect it.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { checkAddress } from '../../net/address-guard.js'
import { ABORTED, raceAbort } from '../../util/abort.js'
import { err, ok, type Result } from '../../util/result.js'
import { fetchError, type FetchError } from './errors.js'
import type { HttpSettings } from './types.js'
import { bareHost, redact } from './urls.js'

export interface PinnedAddress {
  readonly address: string
  readonly family: 4 | 6
}

type PinnedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void

/**
 * The `lookup` hook given to http(s).request: answers with the addresses the guard checked and
 * never asks DNS again. Handles both call forms net uses (`all: true` with autoSelectFamily).
 * Exported for tests.
 */
export const pinnedLookup =
  (addresses: readonly PinnedAddress[]): PinnedLookup =>
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

/** Host name to all its addresses, with the system resolver. */
export const defaultLookup = (host: string): Promise<string[]> =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (e, addresses) => {
      if (e !== null) reject(e)
      else resolve(addresses.map((a) => a.address))
    })
  })

/** The URL's host resolved, every address checked against the guard (and the operator's allow-list). */
export async function resolveChecked(url: URL, signal: AbortSignal, s: HttpSettings): Promise<Result<PinnedAddress[], FetchError>> {
  const host = bareHost(url)
  const shown = redact(url)
  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    let answer: string[] | typeof ABORTED
    try {
      answer = await raceAbort(s.lookup(host), signal)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e))
      return err(fetchError('network', shown, `cannot resolve ${host}: ${code}`))
    }
    if (answer === ABORTED) return err(fetchError('timeout', shown, `no answer within ${s.timeoutMs} ms (resolving ${host})`))
    addresses = answer
  }
  if (addresses.length === 0) return err(fetchError('network', shown, `cannot resolve ${host}: no address`))
  const pinned: PinnedAddress[] = []
  for (const address of addresses) {
    const v = checkAddress(address, s.allow)
    if (!v.allowed) {
      const what = address === host ? v.detail : `${host} resolves to ${v.detail}`
      return err(fetchError('blocked_address', shown, `${what}: not allowed (operator allow-list: ivr.fetch_allow)`))
    }
    const family = isIP(address)
    pinned.push({ address, family: family === 6 ? 6 : 4 })
  }
  return ok(pinned)
}
