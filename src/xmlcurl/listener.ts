/**
 * The xml_curl listener (`xml_curl.host`/`xml_curl.port`, loopback by default; docs/deploy.md
 * "Listeners"). FreeSWITCH's documents are served here and only here: the directory holds every
 * SIP password, so it does not share the API's listener, whose address is meant for application
 * servers. Anything but the xml_curl route is a plain 404.
 *
 * It answers on node:http directly: FreeSWITCH's threads wait on every fetch, and koa's
 * middleware, router and context cost about a tenth of a document's CPU (issue 15,
 * docs/bench.md). What the Koa application did is kept, and compared with a Koa application
 * running router.ts in test/xmlcurl/listener-http.test.ts: the route's path matched as
 * @koa/router matches it (case-insensitive, an optional trailing `/`, the query ignored), 405 /
 * 501 / OPTIONS as its allowedMethods() answers them, a bare 500 for an exception.
 *
 * `guard` runs before the route: the daemon gives it this listener's own failed-authentication
 * throttle (src/api/throttle.ts), separate from the API's, so that a local API client guessing
 * tokens does not lock FreeSWITCH (also on loopback) out of its documents. A refused request
 * is a non-200 for mod_xml_curl, which then falls back like for any HTTP error
 * (test/fixtures/freeswitch/xml_curl/13-http-500-dialplan.txt).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { err, type Result } from '../util/result.js'
import { parseBasic } from './auth.js'
import { MAX_FORM_BYTES, readBody, xmlCurlExchange, type BodyRefusal, type XmlCurlDeps, type XmlCurlReply } from './exchange.js'

/** The listener's failed-authentication throttle, as the daemon wires it. */
export interface ListenerGuard {
  /** The refusal for a client blocked now (status, Retry-After seconds, JSON body), asked before anything else. */
  blocked(remoteAddress: string | undefined): { readonly status: number; readonly retryAfterSec: number; readonly body: unknown } | undefined
  /** A 401 was answered to this client; `claimed` is the Basic username it gave. */
  failed(remoteAddress: string | undefined, claimed: string | undefined): void
}

export interface XmlCurlListenerDeps extends XmlCurlDeps {
  readonly guard?: ListenerGuard
}

/** The methods @koa/router knows (501 for the others on the route's path). */
const KNOWN_METHODS = new Set(['HEAD', 'OPTIONS', 'GET', 'PUT', 'PATCH', 'POST', 'DELETE'])
const TEXT = 'text/plain; charset=utf-8'
const XML = 'text/xml; charset=utf-8'

function send(res: ServerResponse, status: number, type: string | undefined, body: string | Buffer, headers?: Readonly<Record<string, string>>): void {
  const all: Record<string, string | number> = { ...headers }
  if (type !== undefined) all['Content-Type'] = type
  all['Content-Length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length
  // writeHead with the whole set at once: cheaper than a setHeader per header.
  res.writeHead(status, all)
  res.end(body)
}

/** A reply without a body of its own gets the status text, as Koa answers it. */
const sendStatus = (res: ServerResponse, status: number, text: string, headers?: Readonly<Record<string, string>>) => send(res, status, TEXT, text, headers)

function formBody(req: IncomingMessage): Promise<Result<string, BodyRefusal>> {
  const declared = Number(req.headers['content-length'] ?? '0')
  if (Number.isFinite(declared) && declared > MAX_FORM_BYTES) return Promise.resolve(err('too_large'))
  return readBody(req, MAX_FORM_BYTES)
}

function writeReply(res: ServerResponse, reply: XmlCurlReply): void {
  send(res, reply.status, reply.xml ? XML : reply.body === '' ? TEXT : undefined, reply.body, reply.headers)
}

/** The request handler for the listener's node:http server. */
export function xmlCurlListener(deps: XmlCurlListenerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const exchange = xmlCurlExchange(deps)
  const route = exchange.path.toLowerCase()
  const isRoute = (url: string | undefined): boolean => {
    const raw = url ?? ''
    const query = raw.indexOf('?')
    const path = (query < 0 ? raw : raw.slice(0, query)).toLowerCase()
    return path === route || (path.length === route.length + 1 && path.endsWith('/') && path.startsWith(route))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const address = req.socket.remoteAddress
    const blocked = deps.guard?.blocked(address)
    if (blocked !== undefined) {
      send(res, blocked.status, 'application/json; charset=utf-8', JSON.stringify(blocked.body), { 'Retry-After': String(blocked.retryAfterSec), 'Cache-Control': 'no-store' })
      return
    }
    const method = req.method ?? ''
    const onRoute = isRoute(req.url)
    // A method @koa/router does not know is 501 on any path, with the route's methods (none elsewhere).
    if (!KNOWN_METHODS.has(method)) return sendStatus(res, 501, 'Not Implemented', { Allow: onRoute ? 'POST' : '' })
    if (!onRoute) return sendStatus(res, 404, 'Not Found')
    if (method !== 'POST') {
      if (method === 'OPTIONS') return send(res, 200, TEXT, '', { Allow: 'POST' })
      return sendStatus(res, 405, 'Method Not Allowed', { Allow: 'POST' })
    }
    const started = process.hrtime.bigint()
    const authorization = req.headers.authorization
    const reply = await exchange.serve({ authorization, contentType: req.headers['content-type'], ip: address, body: () => formBody(req) })
    writeReply(res, reply)
    if (reply.status === 401) deps.guard?.failed(address, parseBasic(authorization)?.user)
    deps.onAnswer?.({ ...reply.answer, seconds: Number(process.hrtime.bigint() - started) / 1e9 })
  }

  return (req, res) => {
    // Errors of the response itself (FreeSWITCH went away while the reply streamed) go to our log.
    res.once('error', (e) => deps.logger.warn({ err: e }, 'xml_curl response error'))
    handle(req, res).catch((e: unknown) => {
      // The exchange answers every failure itself; this is a bug, and FreeSWITCH gets a bare 500.
      deps.logger.error({ err: e }, 'xml_curl request failed with an exception')
      if (!res.headersSent) send(res, 500, TEXT, '')
      else res.destroy()
    })
  }
}
