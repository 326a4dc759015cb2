/**
 * The xml_curl route as a Koa router, for an application that mounts it beside its own routes
 * (the tests, test/ivr/runner/e2e.test.ts). The daemon's own listener answers on node:http
 * (listener.ts); both run the same exchange (exchange.ts), which says what each reply is.
 *
 * Mount this router before any body parser (or keep body parsers to the API prefix): it reads
 * the raw body itself. If a parser already consumed it, `ctx.request.rawBody` is used.
 */
import Router from '@koa/router'
import type { Context } from 'koa'
import { err, ok, type Result } from '../util/result.js'
import { MAX_FORM_BYTES, readBody, xmlCurlExchange, type BodyRefusal, type XmlCurlDeps } from './exchange.js'

export type { IvrHandoff, XmlCurlAnswer, XmlCurlDeps } from './exchange.js'
/** @internal Exported for tests: test/xmlcurl sends a form over it. */
export { MAX_FORM_BYTES } from './exchange.js'

function formBody(ctx: Context): Promise<Result<string, BodyRefusal>> {
  const declared = Number(ctx.get('Content-Length') || '0')
  if (Number.isFinite(declared) && declared > MAX_FORM_BYTES) return Promise.resolve(err('too_large'))
  const raw: unknown = (ctx.request as { rawBody?: unknown }).rawBody
  if (ctx.req.readableEnded) return Promise.resolve(ok(typeof raw === 'string' && raw.length <= MAX_FORM_BYTES ? raw : ''))
  return readBody(ctx.req, MAX_FORM_BYTES)
}

/** @internal Exported for tests: test/xmlcurl and test/ivr mount the routes without the listener. */
export function xmlCurlRouter(deps: XmlCurlDeps): Router {
  const router = new Router()
  const exchange = xmlCurlExchange(deps)
  router.post(exchange.path, async (ctx) => {
    const started = process.hrtime.bigint()
    const reply = await exchange.serve({
      authorization: ctx.get('Authorization') || undefined,
      contentType: ctx.get('Content-Type'),
      ip: ctx.ip,
      body: () => formBody(ctx),
    })
    ctx.status = reply.status
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value)
    if (reply.xml) ctx.type = 'text/xml'
    ctx.body = reply.body
    deps.onAnswer?.({ ...reply.answer, seconds: Number(process.hrtime.bigint() - started) / 1e9 })
  })
  return router
}
