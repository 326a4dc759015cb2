/**
 * Every address form (forms.ts) against every outbound path the daemon has: a result callback
 * attempt, an IVR document fetch, a `<GetJSON>` fetch, a redirect hop (`<Redirect>` and
 * document redirects go through the same fetch), and the check of a prompt URL handed to
 * FreeSWITCH. Each must be refused with the guard's reason, and a canary listening on the
 * loopback port (both families) must see no connection at all. Then the same with host names
 * that resolve to refused addresses (an injected resolver).
 */
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { attemptDelivery, type AttemptRequest } from '../../src/callbacks/attempt.js'
import type { AttemptOutcome } from '../../src/callbacks/policy.js'
import { parseTarget } from '../../src/callbacks/policy.js'
import { createCallbackTransport } from '../../src/callbacks/transport.js'
import type { CallbackSettings } from '../../src/callbacks/types.js'
import { createFetcher } from '../../src/ivr/fetch/fetcher.js'
import { checkAddress, parseCidrList } from '../../src/net/address-guard.js'
import { bareHostname, type Resolver } from '../../src/net/policy.js'
import { silentLogger } from '../../src/util/logger.js'
import { LITERAL_FORMS, RESOLVED_FORMS } from './forms.js'

interface Test {
  teardown(fn: () => unknown): void
}

/** Counts every TCP connection on one port, on 127.0.0.1 and ::1 (a dual-stack listener). */
async function canary(t: Test): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = []
  const server = net.createServer((c) => {
    hits.push(c.remoteAddress ?? '?')
    c.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '::', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as AddressInfo).port, hits }
}

const settings = (allow: string[] = []): CallbackSettings => ({
  timeout_ms: 1000,
  give_up_after_ms: 60_000,
  backoff_initial_ms: 10,
  backoff_max_ms: 10,
  concurrency_per_domain: 1,
  allow,
})

const attempt = (url: string): AttemptRequest => {
  const target = parseTarget(url)
  if (!target.ok) throw new Error(target.error)
  return { deliveryId: 'd-1', requestId: 'r-1', attempt: 1, target: target.value, body: '{"result_code":0}', secret: undefined }
}

const fakeResolver =
  (answers: Record<string, readonly string[]>): Resolver =>
  (host) => {
    const a = answers[host]
    return a === undefined ? Promise.reject(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' })) : Promise.resolve([...a])
  }

interface Verdict {
  readonly refused: boolean
  /** What happened, with the reason: asserted on and shown when the assertion fails. */
  readonly message: string
}
type Path = (url: string) => Promise<Verdict>

const describe = (o: AttemptOutcome): string => `${o.kind}: ${'reason' in o ? o.reason : ''}`

/** The outbound paths, each with nothing allowed and the same resolver. */
function outboundPaths(t: Test, resolver?: Resolver): Record<string, Path> {
  const transport = createCallbackTransport(() => settings(), resolver)
  t.teardown(() => transport.close())
  const fetcher = createFetcher({ allow: [], logger: silentLogger(), timeoutMs: 1000, ...(resolver !== undefined ? { lookup: resolver } : {}) })
  const ctx = { timeoutMs: 1000, signal: new AbortController().signal, now: Date.now, userAgent: 'forms-test', transport }
  return {
    'result callback': async (url) => {
      const o = await attemptDelivery(attempt(url), ctx)
      return { refused: o.kind === 'fatal' && o.reason.startsWith('address refused: '), message: describe(o) }
    },
    'ivr document': async (url) => {
      const r = await fetcher.fetchDocument([url], { CallUUID: 'u' })
      return { refused: !r.ok && r.error.kind === 'blocked_address', message: r.ok ? 'fetched' : `${r.error.kind}: ${r.error.message}` }
    },
    GetJSON: async (url) => {
      const r = await fetcher.fetchJson(url, {})
      return { refused: !r.ok && r.error.kind === 'blocked_address', message: r.ok ? 'fetched' : `${r.error.kind}: ${r.error.message}` }
    },
    'prompt URL check': async (url) => {
      const r = await fetcher.checkTarget(url)
      return { refused: !r.ok && r.error.kind === 'blocked_address', message: r.ok ? 'allowed' : `${r.error.kind}: ${r.error.message}` }
    },
  }
}

/** An IVR server on 127.0.0.1 that redirects to `?to=<url>`, and a fetcher allowed to reach it (127.0.0.1/32 only). */
async function redirectHop(t: Test): Promise<{ path: Path; skips: (url: string) => boolean }> {
  const server = http.createServer((req, res) => {
    res.writeHead(302, { location: new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/' })
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const port = (server.address() as AddressInfo).port
  const allow = parseCidrList(['127.0.0.1/32'])
  if (!allow.ok) throw new Error(allow.error)
  const fetcher = createFetcher({ allow: allow.value, logger: silentLogger(), timeoutMs: 1000 })
  return {
    path: async (url) => {
      const r = await fetcher.fetchDocument([`http://127.0.0.1:${port}/?to=${encodeURIComponent(url)}`], {})
      return { refused: !r.ok && r.error.kind === 'blocked_address', message: r.ok ? 'fetched' : `${r.error.kind}: ${r.error.message}` }
    },
    // Forms that ARE 127.0.0.1 are allowed on this path by its allow-list: not a refusal case here.
    skips: (url) => checkAddress(bareHostname(new URL(url).hostname), allow.value).allowed,
  }
}

const reasonText = (reason: string): RegExp => new RegExp(reason.replace(/_/g, '-'))

t.test('every literal address form is refused on every outbound path, and nothing connects', async (t) => {
  const c = await canary(t)
  const paths = outboundPaths(t)
  const redirect = await redirectHop(t)
  let refusals = 0
  for (const form of LITERAL_FORMS) {
    const url = `http://${form.host}:${c.port}/x`
    const all: Array<[string, Path]> = Object.entries(paths)
    if (!redirect.skips(url)) all.push(['redirect hop', redirect.path])
    for (const [name, path] of all) {
      const r = await path(url)
      t.ok(r.refused, `${name} ${url}: refused (${r.message})`)
      t.match(r.message, reasonText(form.reason), `${name} ${url}: names the reason (${form.reason})`)
      if (r.refused) refusals++
    }
  }
  t.same(c.hits, [], 'the canary saw no connection')
  t.ok(refusals > LITERAL_FORMS.length * 4, `${refusals} refusals across ${LITERAL_FORMS.length} forms`)
})

t.test('host names resolving to refused addresses are refused on every outbound path, and nothing connects', async (t) => {
  const c = await canary(t)
  const paths = outboundPaths(t, fakeResolver(Object.fromEntries(RESOLVED_FORMS.map((f) => [f.name, f.addresses]))))
  for (const form of RESOLVED_FORMS) {
    const url = `http://${form.name}:${c.port}/x`
    for (const [name, path] of Object.entries(paths)) {
      const r = await path(url)
      t.ok(r.refused, `${name} ${url}: refused (${r.message})`)
      t.match(r.message, new RegExp(`${form.name.replace(/\./g, '\\.')} resolves to .*${form.reason.replace(/_/g, '-')}`), `${name} ${form.name}: names the address`)
    }
  }
  const cb = await paths['result callback']?.(`http://${RESOLVED_FORMS[0]?.name ?? ''}:${c.port}/x`)
  t.match(cb?.message, /\(operator allow-list: callbacks\.allow\)/, 'a callback refusal names its allow-list')
  t.same(c.hits, [], 'the canary saw no connection')
})

t.test('the allow-lists let exactly their ranges through, per path', async (t) => {
  const c = await canary(t)
  const receiver = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"ok":true}')
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const port = (receiver.address() as AddressInfo).port
  const cbTransport = createCallbackTransport(() => settings(['127.0.0.1/32']))
  t.teardown(() => cbTransport.close())
  const ctx = { timeoutMs: 1000, signal: new AbortController().signal, now: Date.now, userAgent: 'forms-test', transport: cbTransport }
  t.match(await attemptDelivery(attempt(`http://127.0.0.1:${port}/cb`), ctx), { kind: 'delivered', status: 200 }, 'callbacks.allow lets 127.0.0.1 through')
  t.match(await attemptDelivery(attempt(`http://2130706433:${port}/cb`), ctx), { kind: 'delivered' }, 'in any textual form')
  t.match(await attemptDelivery(attempt(`http://127.0.0.2:${c.port}/cb`), ctx), { kind: 'fatal', reason: /127\.0\.0\.2 is loopback/ }, 'but not its neighbour')
  t.match(await attemptDelivery(attempt(`http://[::1]:${c.port}/cb`), ctx), { kind: 'fatal', reason: /::1 is loopback/ }, 'nor the other family')
  // The IVR's list does not open callbacks, nor the other way round.
  const ivrOnly = createFetcher({ allow: [], logger: silentLogger() })
  t.match(await ivrOnly.fetchJson(`http://127.0.0.1:${port}/`, {}), { ok: false, error: { kind: 'blocked_address', message: /ivr\.fetch_allow/ } })
  t.same(c.hits, [], 'the canary saw no connection')
})
