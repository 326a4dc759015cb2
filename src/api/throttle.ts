/**
 * Throttled authentication (docs/api.md "Throttled authentication"): a client address that
 * fails authentication `http.auth_throttle.max_failures` times within `window_ms` gets
 * `429 too_many_requests` with `Retry-After` on every route of the listener that compares
 * credentials (the API operations, gen_ws_ticket, the ws_cti upgrade; xml_curl on its own
 * listener) and on unknown paths, checked BEFORE any credential is compared, until its window
 * ends.
 *
 * The routes that compare no credential stay open to it: /healthz, /metrics, the OpenAPI
 * document and the live calls page's files (/ui/), mounted before this middleware (app.ts
 * `publicRouters`). Blocking them gave the throttle's victim a blind spot instead: a monitoring
 * system, a load balancer or a browser sharing an address with a misconfigured client (one
 * NAT, one proxy, one host) saw the daemon as down. They give an attacker nothing to guess
 * with. The rule is "closed unless listed": a new route is throttled until it is mounted there.
 *
 * The rule, and why it is keyed as it is:
 * - Refusal is keyed on the client address only (IPv4, or the /64 of an IPv6 address: one
 *   host usually holds a whole /64, so per-address counting there would be no limit at all).
 * - Failures are also counted per claimed domain (the Basic username), but that figure is only
 *   logged (a warning when a domain passes the threshold in a window: a guess spread over many
 *   addresses). It never refuses: anyone can send wrong tokens in a domain's name, and a
 *   per-domain block would lock that domain's valid callers out from everywhere.
 * - A success does not clear the address's count: otherwise a holder of one domain's token
 *   could interleave valid requests to guess another domain's tokens without limit.
 * - The client address is the socket's remote address. X-Forwarded-For is not trusted: behind
 *   a reverse proxy every client shares the proxy's address (and its block), so the proxy must
 *   do its own limiting or the daemon must face clients directly.
 *
 * Memory is bounded: both tables are LRUs of at most `max_clients` entries (a Map in
 * least-recently-touched order; the oldest entry goes when a new one would pass the bound).
 * An attacker with more addresses than that can push its own entries out, which only costs it
 * the block it had earned on the address evicted; valid callers are never refused by eviction.
 *
 * One instance per listener: the API listener's, and the xml_curl listener's own (src/daemon.ts),
 * so that a local API client guessing tokens cannot lock FreeSWITCH (also on loopback) out of
 * its documents.
 */
import { isIPv6 } from 'node:net'
import type { Context, Middleware } from 'koa'
import { parseBasic } from '../util/basic-auth.js'
import type { Logger } from '../util/logger.js'
import { apiError, type ApiError } from './errors.js'

export interface ThrottleSettings {
  /** Failures of one client address within `window_ms` that start its block. */
  readonly max_failures: number
  readonly window_ms: number
  /** Entries kept per table (client addresses; claimed domains). */
  readonly max_clients: number
}

/** A refused client: the error to answer and the seconds it should wait (`Retry-After`). */
export interface Blocked {
  readonly error: ApiError
  readonly retryAfterSec: number
}

interface Window {
  /** Epoch ms at which the window began (the first failure counted in it). */
  start: number
  failures: number
}

/** A bounded table of failure windows, least recently touched first. */
class WindowTable {
  private readonly windows = new Map<string, Window>()

  get size(): number {
    return this.windows.size
  }

  /** The live window of `key`, or undefined (an expired one is dropped). */
  get(key: string, now: number, windowMs: number): Window | undefined {
    const w = this.windows.get(key)
    if (w === undefined) return undefined
    if (now - w.start >= windowMs) {
      this.windows.delete(key)
      return undefined
    }
    return w
  }

  /** Counts one failure of `key`; returns its window after the count. */
  count(key: string, now: number, windowMs: number, maxEntries: number): Window {
    let w = this.get(key, now, windowMs)
    if (w === undefined) w = { start: now, failures: 0 }
    else this.windows.delete(key) // re-inserted below: most recently touched goes last
    w.failures += 1
    this.windows.set(key, w)
    for (const oldest of this.windows.keys()) {
      if (this.windows.size <= maxEntries) break
      this.windows.delete(oldest)
    }
    return w
  }
}

/**
 * The key a client address is counted under: IPv4 as is (also when IPv4-mapped), IPv6 by its /64.
 * @internal Exported for tests: test/api checks the IPv4/IPv6 keys one by one.
 */
export function clientKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'unknown'
  const address = remoteAddress.replace(/%.*$/, '').toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address)
  if (mapped?.[1] !== undefined) return mapped[1]
  if (!isIPv6(address)) return address
  const [head = '', tail] = address.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'), ...tailGroups]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}

export class AuthThrottle {
  private readonly clients = new WindowTable()
  private readonly domains = new WindowTable()

  constructor(
    private readonly settings: () => ThrottleSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Client addresses (or /64s) currently tracked; never more than `max_clients`. */
  get trackedClients(): number {
    return this.clients.size
  }

  /** Whether this client is refused now; ask before comparing any credential. */
  blocked(remoteAddress: string | undefined): Blocked | undefined {
    const s = this.settings()
    const now = this.now()
    const w = this.clients.get(clientKey(remoteAddress), now, s.window_ms)
    if (w === undefined || w.failures < s.max_failures) return undefined
    const retryAfterSec = Math.max(1, Math.ceil((w.start + s.window_ms - now) / 1000))
    return {
      retryAfterSec,
      error: apiError('too_many_requests', `too many failed authentications from this address; retry after ${retryAfterSec} s`),
    }
  }

  /** Counts a failed authentication of this client, claiming `domain` (the Basic username) if any. */
  failed(remoteAddress: string | undefined, domain: string | undefined): void {
    const s = this.settings()
    const now = this.now()
    const key = clientKey(remoteAddress)
    const w = this.clients.count(key, now, s.window_ms, s.max_clients)
    if (w.failures === s.max_failures) this.logger.warn({ client: key, window_ms: s.window_ms }, 'auth throttle: client blocked after repeated failed authentications')
    if (domain === undefined) return
    const claimed = domain.slice(0, 253).toLowerCase()
    const d = this.domains.count(claimed, now, s.window_ms, s.max_clients)
    // Logged only, never refused on: see the file comment.
    if (d.failures === s.max_failures) this.logger.warn({ domain: claimed, window_ms: s.window_ms }, 'auth throttle: many failed authentications for one domain')
  }
}

/** The Basic username of a request, without comparing anything (the domain a failure claims). */
export const claimedDomain = (authorization: string | undefined): string | undefined => parseBasic(authorization)?.user

/**
 * Koa middleware for a listener's routes after it (app.ts mounts the public ones before it):
 * answers a blocked client with `refuse` (which writes the 429 body) and `Retry-After` before
 * any of them runs, and counts every 401 a route answers as a failed authentication of its client.
 */
export function authThrottleMiddleware(throttle: AuthThrottle, refuse: (ctx: Context, error: ApiError) => void): Middleware {
  return async (ctx, next) => {
    const address = ctx.req.socket.remoteAddress
    const blocked = throttle.blocked(address)
    if (blocked !== undefined) {
      ctx.set('Retry-After', String(blocked.retryAfterSec))
      ctx.set('Cache-Control', 'no-store')
      refuse(ctx, blocked.error)
      return
    }
    try {
      await next()
    } catch (e) {
      // A route that throws its 401 (ctx.throw) fails the client as much as one that answers it.
      if (typeof e === 'object' && e !== null && (e as { status?: unknown }).status === 401) throttle.failed(address, claimedDomain(ctx.headers.authorization))
      throw e
    }
    if (ctx.status === 401) throttle.failed(address, claimedDomain(ctx.headers.authorization))
  }
}
