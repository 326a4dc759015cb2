/**
 * One mod_xml_curl HTTP exchange, independent of the HTTP framework: `POST {xml_curl.path}/xml_curl`
 * (test/fixtures/freeswitch/xml_curl/: every fetch is `POST /freeswitch/xml_curl` with
 * `Content-Type: application/x-www-form-urlencoded` and no `Expect`, because of
 * disable-100-continue). The xml_curl listener answers on node:http with it (listener.ts: koa's
 * middleware cost a tenth of a document's CPU, issue 15), and router.ts mounts the same exchange
 * in a Koa application (tests, an application that wants the route beside its own).
 *
 * Replies: 401 with `WWW-Authenticate` for wrong credentials (FreeSWITCH logs "Received HTTP
 * error 401" and uses its static XML: test/fixtures/freeswitch/xml_curl/13-http-500-dialplan.txt
 * shows the same for a 500); 413 with the not-found document for a body over the limit;
 * otherwise 200 `text/xml` with either our document or the not-found document. Malformed input
 * never throws out of here.
 */
import type { IncomingMessage } from 'node:http'
import type { Runtime } from '../runtime/store.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { credentialsMatch } from './auth.js'
import type { BridgeGate } from './bridge-gate.js'
import { NOT_FOUND } from './document.js'
import { answerFetch } from './fetch.js'
import { FetchForm } from './form.js'
import type { IvrKnown } from './leg.js'
import type { DialplanRecording } from './recording.js'

/**
 * Optional link to the IVR runner: whether it holds an IVR source (an `xml_url:` destination of
 * an API request) under this key. Without it, an `ivr` destination is accepted only when its key
 * is the leg's own request id. See IVR_VARS (routes.ts) for the variables a parked channel carries.
 */
export interface IvrHandoff {
  has(domain: string, key: string): boolean
}

export interface XmlCurlDeps {
  readonly runtime: () => Runtime
  readonly logger: Logger
  readonly ivr?: IvrHandoff
  /** The channel limit's check of a request's bridge (the origination engine); without it, bridges are not checked. */
  readonly bridgeGate?: BridgeGate
  /** Recording files for the answered legs that carry a recording id; without it, nothing is recorded. */
  readonly recording?: DialplanRecording
  /** Told of every answered fetch (the daemon's metrics): FreeSWITCH's threads wait on each. */
  readonly onAnswer?: (a: XmlCurlAnswer) => void
}

/** One answered fetch, with bounded values (docs/operations.md `cod_xmlcurl_*`). */
export interface XmlCurlAnswer {
  /** mod_xml_curl's `section`; anything else (or none) is `other`. */
  readonly section: 'directory' | 'dialplan' | 'configuration' | 'phrases' | 'other'
  /** A document served, the not-found document, or refused before reading (credentials, size). */
  readonly outcome: 'found' | 'not_found' | 'refused' | 'error'
  readonly seconds: number
}

const SECTIONS = new Set<string>(['directory', 'dialplan', 'configuration', 'phrases'])
const sectionOf = (s: string | undefined): XmlCurlAnswer['section'] => (s !== undefined && SECTIONS.has(s) ? (s as XmlCurlAnswer['section']) : 'other')

/**
 * The largest form we read. Real requests are 0.5-8 KB (requests 01-05 in
 * test/fixtures/freeswitch/xml_curl/); SDP and headers make them grow, not 20-fold.
 */
export const MAX_FORM_BYTES = 128 * 1024

const FORM_TYPE_RE = /^application\/x-www-form-urlencoded\s*(;|$)/i

export type BodyRefusal = 'too_large' | 'aborted'

/** The request's body as UTF-8 text, at most `limit` bytes (the rest is drained and dropped). */
export function readBody(req: IncomingMessage, limit: number): Promise<Result<string, BodyRefusal>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const finish = (r: Result<string, BodyRefusal>) => {
      if (settled) return
      settled = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onError)
      if (!r.ok) req.resume() // drain and drop the rest
      resolve(r)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) finish(err('too_large'))
      else chunks.push(chunk)
    }
    const onEnd = () => finish(ok((chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8')))
    const onError = () => finish(err('aborted'))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onError)
  })
}

/** What the exchange needs of a request, whatever the framework. */
export interface XmlCurlRequest {
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  /** The client's address, for the log. */
  readonly ip: string | undefined
  /** The body, read only once the credentials passed. */
  readonly body: () => Promise<Result<string, BodyRefusal>>
}

/** The reply, for the framework to write. */
export interface XmlCurlReply {
  readonly status: number
  /** `text/xml`, or nothing (an empty body). */
  readonly xml: boolean
  readonly body: string | Buffer
  readonly headers?: Readonly<Record<string, string>>
  /** What it was, for the metrics (onAnswer). */
  readonly answer: Omit<XmlCurlAnswer, 'seconds'>
}

const UNAUTHORIZED: XmlCurlReply = {
  status: 401,
  xml: false,
  body: '',
  headers: { 'WWW-Authenticate': 'Basic realm="xml_curl", charset="UTF-8"' },
  answer: { section: 'other', outcome: 'refused' },
}

const notFoundReply = (status: number, outcome: XmlCurlAnswer['outcome'], section: XmlCurlAnswer['section'] = 'other'): XmlCurlReply => ({
  status,
  xml: true,
  body: NOT_FOUND,
  answer: { section, outcome },
})

/** The exchange of the xml_curl route: `path` is the route's path, fixed when it is made. */
export function xmlCurlExchange(deps: XmlCurlDeps): { readonly path: string; readonly serve: (request: XmlCurlRequest) => Promise<XmlCurlReply> } {
  const log = deps.logger
  const path = `${deps.runtime().config.daemon.xml_curl.path}/xml_curl`
  const ivrKnown: IvrKnown | undefined = deps.ivr === undefined ? undefined : (domain, key) => deps.ivr?.has(domain, key) === true

  const serve = async (request: XmlCurlRequest): Promise<XmlCurlReply> => {
    const runtime = deps.runtime()
    if (!credentialsMatch(request.authorization || undefined, runtime.config.daemon.xml_curl)) {
      log.warn({ ip: request.ip }, 'xml_curl request with wrong credentials')
      return UNAUTHORIZED
    }
    const body = await request.body()
    if (!body.ok) {
      log.warn({ reason: body.error }, 'xml_curl body refused')
      if (body.error === 'too_large') return { ...notFoundReply(413, 'refused'), headers: { Connection: 'close' } }
      return notFoundReply(400, 'refused')
    }
    if (!FORM_TYPE_RE.test(request.contentType ?? '')) {
      log.debug('xml_curl request is not form-encoded')
      return notFoundReply(200, 'not_found')
    }
    let section: XmlCurlAnswer['section'] = 'other'
    try {
      const form = FetchForm.parse(body.value)
      section = sectionOf(form.get('section'))
      const answer = answerFetch(form, runtime.directory, ivrKnown, deps.bridgeGate, deps.recording)
      if (answer.found) {
        // The debug lines cost their object only when debug is on (issue 15: nothing per request at info).
        if (log.isLevelEnabled('debug')) log.debug({ section: form.get('section') }, 'xml_curl document served')
        return { status: 200, xml: true, body: answer.bytes ?? answer.xml, answer: { section, outcome: 'found' } }
      }
      if (log.isLevelEnabled('debug')) log.debug({ section: form.get('section'), reason: answer.reason }, 'xml_curl not found')
      return notFoundReply(200, 'not_found', section)
    } catch (e) {
      // A value that cannot be written (UnsafeValueError) or a bug: FreeSWITCH gets its static XML.
      log.error({ err: e }, 'xml_curl answer failed')
      return notFoundReply(200, 'error', section)
    }
  }
  return { path, serve }
}
