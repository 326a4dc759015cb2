/**
 * The daemon's one outbound HTTP transport: every request it makes on behalf of someone else
 * (result callbacks, IVR documents, `<GetJSON>`, `<Redirect>`, error reports) goes through
 * here, and the check of prompt URLs that FreeSWITCH downloads asks the same policy.
 *
 * - One undici Agent per transport (one transport per allow-list: callbacks, IVR), so one
 *   keep-alive pool per receiver origin: repeated callbacks to one receiver reuse connections.
 * - Its `connect` is the guarded connector (guarded-connect.ts): resolve once, check every
 *   address, connect only to the checked ones. A pooled connection was checked when opened.
 * - Redirects are never followed here: a caller that follows them (the IVR fetcher) sends
 *   each hop as a new request, which is checked again like the first.
 * - Time: one budget per request covering connect, headers and body; it ends the request at
 *   its deadline even while undici still waits for a connection.
 * - Size: the body is read up to `maxBytes`; past it the request fails (`overflow: 'fail'`) or
 *   the rest is dropped (`'truncate'`); never buffered beyond the cap. No compression is asked
 *   for and none is decoded, so the cap counts the bytes the caller gets.
 * Failures are values (OutboundError); nothing here throws at its caller.
 */
import { STATUS_CODES } from 'node:http'
import { Agent, request as undiciRequest } from 'undici'
import { err, ok, type Result } from '../util/result.js'
import type { Cidr } from './address-guard.js'
import { guardedConnector, PinTable } from './guarded-connect.js'
import { OutboundFailure, type OutboundError } from './outbound-error.js'
import { bareHostname, resolveChecked, systemResolver, type OutboundPolicy, type Resolver } from './policy.js'

export interface TransportOptions {
  /** The allow-list, read at each connection (so a reload applies to new connections). */
  readonly allow: () => readonly Cidr[]
  /** Its configuration key, named in refusals: `callbacks.allow`, `ivr.fetch_allow`. */
  readonly setting: string
  /** Host name to addresses; default the system resolver. Tests inject one. */
  readonly resolver?: Resolver
  /** Trusted CA certificates for https; replaces the default roots (private servers, tests). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  /** One resolution plus one TCP/TLS connect at most (default 10 s; requests' budgets are shorter). */
  readonly connectTimeoutMs?: number
  /** Idle pooled connections are closed after this (default 4 s). */
  readonly keepAliveTimeoutMs?: number
  /** Connections per origin at most (default 16; more requests queue in the pool). */
  readonly connectionsPerOrigin?: number
}

export interface OutboundRequest {
  /** Absolute http(s) URL without user information (callers turn it into an Authorization header). */
  readonly url: URL
  readonly method: 'GET' | 'POST'
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /** This request's budget: connect, headers and body. */
  readonly timeoutMs: number
  /** The caller's own stop (shutdown, a redirect chain's deadline): an `aborted` error. */
  readonly signal?: AbortSignal
  readonly maxBytes: number
  /** Past maxBytes: fail with `too_large`, or keep the first maxBytes (`truncated: true`). */
  readonly overflow: 'fail' | 'truncate'
}

export interface OutboundResponse {
  readonly status: number
  /** The standard reason phrase of the status ('' for unknown ones). */
  readonly statusText: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Buffer
  readonly truncated: boolean
}

export interface OutboundTransport {
  request(r: OutboundRequest): Promise<Result<OutboundResponse, OutboundError>>
  /**
   * Whether a URL passes the policy without requesting it: http(s), and every address its host
   * resolves to allowed. For URLs another program fetches (FreeSWITCH's prompt downloads): a
   * check, not a pin, since that program resolves again.
   */
  check(url: string, timeoutMs: number): Promise<Result<void, OutboundError>>
  /** Closes the pools: in-flight requests get 2 s to finish, then their connections are cut. */
  close(): Promise<void>
}

/** An absolute http(s) URL with a host, or `bad_url`. */
function parseOutboundUrl(raw: string, base?: URL): Result<URL, OutboundError> {
  let url: URL
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base)
  } catch {
    return err({ kind: 'bad_url', message: 'not a valid URL' })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return err({ kind: 'bad_url', message: `scheme ${url.protocol} is not allowed (http and https only)` })
  }
  if (url.hostname === '') return err({ kind: 'bad_url', message: 'URL has no host' })
  return ok(url)
}

const flatHeaders = (h: Record<string, string | string[] | undefined>): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
  return out
}

/** Drops the rest of a body; undici reports that as an error event, which nobody needs to hear. */
const discard = (body: { on(event: 'error', f: () => void): unknown; destroy(): unknown }): void => {
  body.on('error', () => undefined)
  body.destroy()
}

const networkError = (e: unknown): OutboundError => {
  if (e instanceof OutboundFailure) return e.failure
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  const message = e instanceof Error ? e.message : String(e)
  return { kind: 'network', message: typeof code === 'string' ? `${code}: ${message}` : message }
}

/** The requests in flight per caller signal (followCaller). */
const followers = new WeakMap<AbortSignal, Set<AbortController>>()

/**
 * Aborts `stop` when `caller` aborts, until the returned function is called (the request ended).
 * One listener per caller signal, whatever the number of requests in flight, so that a signal
 * shared by every delivery (the dispatcher's shutdown) gathers neither listeners (Node warns past
 * ten) nor anything else. Not AbortSignal.any([stop, caller]): Node 20 keeps a WeakRef to every
 * signal so made in the caller's set of dependants, never removed while the caller lives: about
 * 35 bytes per delivery for the daemon's life (bench/soak.ts; docs/bench.md, issue 32).
 */
function followCaller(caller: AbortSignal, stop: AbortController): () => void {
  if (caller.aborted) {
    stop.abort()
    return () => undefined
  }
  let inFlight = followers.get(caller)
  if (inFlight === undefined) {
    const set = new Set<AbortController>()
    followers.set(caller, set)
    caller.addEventListener('abort', () => {
      for (const c of set) c.abort()
      set.clear()
    }, { once: true })
    inFlight = set
  }
  const mine = inFlight
  mine.add(stop)
  return () => mine.delete(stop)
}

export function createTransport(o: TransportOptions): OutboundTransport {
  const policy: OutboundPolicy = { allow: o.allow, setting: o.setting, resolver: o.resolver ?? systemResolver }
  const pins = new PinTable()
  const connect = guardedConnector({ policy, pins, connectTimeoutMs: o.connectTimeoutMs ?? 10_000, ...(o.ca !== undefined ? { ca: o.ca } : {}) })
  const agent = new Agent({
    connect,
    keepAliveTimeout: o.keepAliveTimeoutMs ?? 4_000,
    connections: o.connectionsPerOrigin ?? 16,
    // Each request's own budget ends it; undici's per-phase timers would only duplicate it.
    headersTimeout: 0,
    bodyTimeout: 0,
  })

  /** The exchange itself, with the host already checked and pinned; never rejects. */
  async function exchange(r: OutboundRequest, signal: AbortSignal): Promise<Result<OutboundResponse, OutboundError>> {
    let res: Awaited<ReturnType<typeof undiciRequest>>
    try {
      res = await undiciRequest(r.url, {
        dispatcher: agent,
        method: r.method,
        // No compression: the size cap then counts the bytes the caller parses (no zip bombs).
        headers: { 'accept-encoding': 'identity', ...r.headers },
        ...(r.body !== undefined ? { body: r.body } : {}),
        signal,
      })
    } catch (e) {
      return err(networkError(e))
    }
    const headers = flatHeaders(res.headers)
    const status = res.statusCode
    const declared = Number(headers['content-length'])
    if (r.overflow === 'fail' && Number.isFinite(declared) && declared > r.maxBytes) {
      discard(res.body)
      return err({ kind: 'too_large', message: `body of ${declared} bytes is larger than ${r.maxBytes} bytes` })
    }
    const chunks: Buffer[] = []
    let size = 0
    let truncated = false
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (size + chunk.length > r.maxBytes) {
          if (r.overflow === 'fail') {
            discard(res.body)
            return err({ kind: 'too_large', message: `body is larger than ${r.maxBytes} bytes` })
          }
          chunks.push(chunk.subarray(0, r.maxBytes - size))
          size = r.maxBytes
          truncated = true
          discard(res.body)
          break
        }
        chunks.push(chunk)
        size += chunk.length
      }
    } catch (e) {
      return err({ kind: 'network', message: `connection failed while reading the body: ${networkError(e).message}` })
    }
    return ok({ status, statusText: STATUS_CODES[status] ?? '', headers, body: Buffer.concat(chunks, size), truncated })
  }

  /** Resolve and check the host (once), pin it, exchange; `stop` ends whichever step runs. */
  async function guarded(r: OutboundRequest, stop: AbortSignal, resolved: () => void): Promise<Result<OutboundResponse, OutboundError>> {
    const host = bareHostname(r.url.hostname)
    const checked = await resolveChecked(host, policy)
    if (!checked.ok) return checked
    if (stop.aborted) return err({ kind: 'aborted', message: 'aborted' })
    resolved()
    const release = pins.hold(host, checked.value)
    try {
      return await exchange(r, stop)
    } finally {
      release()
    }
  }

  const request: OutboundTransport['request'] = async (r) => {
    const host = bareHostname(r.url.hostname)
    const stop = new AbortController()
    // One signal per request; the caller's (shared by many requests, e.g. the shutdown) stops it
    // through followCaller, which neither piles listeners on it nor leaves a trace in it.
    const unfollow = r.signal === undefined ? undefined : followCaller(r.signal, stop)
    const signal = stop.signal
    let phase: 'resolving' | 'answer' = 'resolving'
    let timedOut: OutboundError | undefined
    const timer = setTimeout(() => {
      timedOut =
        phase === 'resolving'
          ? { kind: 'timeout', phase, message: `no answer within ${r.timeoutMs} ms (resolving ${host})` }
          : { kind: 'timeout', phase, message: `no complete answer within ${r.timeoutMs} ms` }
      stop.abort()
    }, r.timeoutMs)
    const stoppedWith = (): OutboundError => timedOut ?? { kind: 'aborted', message: 'aborted' }
    try {
      if (signal.aborted) return err(stoppedWith())
      // undici does not end a request still waiting for its connection when the signal fires,
      // and a resolver may never answer: the race ends the request at its deadline anyway
      // (what is left behind settles on its own and is dropped).
      const stopped = new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }))
      const result = await Promise.race([guarded(r, signal, () => (phase = 'answer')), stopped])
      if (result === undefined || timedOut !== undefined) return err(stoppedWith())
      return result
    } catch (e) {
      // The policy's resolver or allow-list threw: a failure of this request, not of the caller.
      return err({ kind: 'dns', message: `cannot resolve ${host}: ${e instanceof Error ? e.message : String(e)}` })
    } finally {
      unfollow?.()
      clearTimeout(timer)
      stop.abort()
    }
  }

  const check: OutboundTransport['check'] = async (raw, timeoutMs) => {
    const url = parseOutboundUrl(raw)
    if (!url.ok) return url
    const host = bareHostname(url.value.hostname)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<Result<never, OutboundError>>((resolve) => {
      timer = setTimeout(
        () => resolve(err({ kind: 'timeout', phase: 'resolving', message: `no answer within ${timeoutMs} ms (resolving ${host})` })),
        timeoutMs,
      )
    })
    try {
      const r = await Promise.race([resolveChecked(host, policy), late])
      return r.ok ? ok(undefined) : r
    } catch (e) {
      return err({ kind: 'dns', message: `cannot resolve ${host}: ${e instanceof Error ? e.message : String(e)}` })
    } finally {
      clearTimeout(timer)
    }
  }

  /** Lets in-flight requests finish for a moment, then cuts what is left (a connect that hangs). */
  const close = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), 2_000)
    })
    const closed = await Promise.race([agent.close().then(() => true as const), grace])
    clearTimeout(timer)
    if (!closed) await agent.destroy().catch(() => undefined)
  }

  return { request, check, close }
}
