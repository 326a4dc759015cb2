/**
 * The HTTP side of mod_xml_curl: `POST {xml_curl.path}/xml_curl`
 * (test/fixtures/freeswitch/xml_curl/: every fetch is `POST /freeswitch/xml_curl` with
 * `Content-Type: application/x-www-form-urlencoded` and no `Expect`, because of
 * disable-100-continue).
 *
 * Replies: 401 with `WWW-Authenticate` for wrong credentials (FreeSWITCH logs "Received HTTP
 * error 401" and uses its static XML: test/fixtures/freeswitch/xml_curl/13-http-500-dialplan.txt
 * shows the same for a 500); 413 with the
 * not-found document for a body over the limit; otherwise 200 `text/xml` with either our
 * document or the not-found document. Malformed input never throws out of here.
 *
 * Mount this router before any body parser (or keep body parsers to the API prefix): it reads
 * the raw body itself. If a parser already consumed it, `ctx.request.rawBody` is used.
 */
import type { IncomingMessage } from 'node:http'
import Router from '@koa/router'
import type { Context } from 'koa'
import type { Runtime } from '../runtime/store.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { credentialsMatch } from './auth.js'
import type { BridgeGate } from './bridge-gate.js'
import { NOT_FOUND } from './document.js'
import { answerFetch } from './fetch.js'
import { FetchForm } from './form.js'

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

function readBody(req: IncomingMessage, limit: number): Promise<Result<string, 'too_large' | 'aborted'>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const finish = (r: Result<string, 'too_large' | 'aborted'>) => {
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
    const onEnd = () => finish(ok(Buffer.concat(chunks).toString('utf8')))
    const onError = () => finish(err('aborted'))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onError)
  })
}

async function formBody(ctx: Context): Promise<Result<string, 'too_large' | 'aborted'>> {
  const declared = Number(ctx.get('Content-Length') || '0')
  if (Number.isFinite(declared) && declared > MAX_FORM_BYTES) return err('too_large')
  const raw: unknown = (ctx.request as { rawBody?: unknown }).rawBody
  if (ctx.req.readableEnded) return ok(typeof raw === 'string' && raw.length <= MAX_FORM_BYTES ? raw : '')
  return readBody(ctx.req, MAX_FORM_BYTES)
}

export function xmlCurlRouter(deps: XmlCurlDeps): Router {
  const log = deps.logger
  const router = new Router()
  const path = `${deps.runtime().config.daemon.xml_curl.path}/xml_curl`
  const ivrKnown = deps.ivr === undefined ? undefined : (domain: string, key: string) => deps.ivr?.has(domain, key) === true

  /** Answers one fetch; says what it was for the metrics (onAnswer). */
  const serve = async (ctx: Context): Promise<Omit<XmlCurlAnswer, 'seconds'>> => {
    const runtime = deps.runtime()
    if (!credentialsMatch(ctx.get('Authorization') || undefined, runtime.config.daemon.xml_curl)) {
      log.warn({ ip: ctx.ip }, 'xml_curl request with wrong credentials')
      ctx.status = 401
      ctx.set('WWW-Authenticate', 'Basic realm="xml_curl", charset="UTF-8"')
      ctx.body = ''
      return { section: 'other', outcome: 'refused' }
    }
    ctx.type = 'text/xml'
    const body = await formBody(ctx)
    if (!body.ok) {
      log.warn({ reason: body.error }, 'xml_curl body refused')
      if (body.error === 'too_large') ctx.set('Connection', 'close')
      ctx.status = body.error === 'too_large' ? 413 : 400
      ctx.type = 'text/xml'
      ctx.body = NOT_FOUND
      return { section: 'other', outcome: 'refused' }
    }
    ctx.status = 200
    if (!FORM_TYPE_RE.test(ctx.get('Content-Type'))) {
      log.debug('xml_curl request is not form-encoded')
      ctx.body = NOT_FOUND
      return { section: 'other', outcome: 'not_found' }
    }
    let section: XmlCurlAnswer['section'] = 'other'
    try {
      const form = FetchForm.parse(body.value)
      section = sectionOf(form.get('section'))
      const answer = answerFetch(form, runtime.directory, ivrKnown, deps.bridgeGate)
      if (answer.found) {
        log.debug({ section: form.get('section') }, 'xml_curl document served')
        ctx.body = answer.bytes ?? answer.xml
        return { section, outcome: 'found' }
      }
      log.debug({ section: form.get('section'), reason: answer.reason }, 'xml_curl not found')
      ctx.body = NOT_FOUND
      return { section, outcome: 'not_found' }
    } catch (e) {
      // A value that cannot be written (UnsafeValueError) or a bug: FreeSWITCH gets its static XML.
      log.error({ err: e }, 'xml_curl answer failed')
      ctx.body = NOT_FOUND
      return { section, outcome: 'error' }
    }
  }

  router.post(path, async (ctx) => {
    const started = process.hrtime.bigint()
    const answered = await serve(ctx)
    deps.onAnswer?.({ ...answered, seconds: Number(process.hrtime.bigint() - started) / 1e9 })
  })
  return router
}
