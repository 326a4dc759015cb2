/**
 * The HTTP application of the xml_curl listener (`xml_curl.host`/`xml_curl.port`, loopback by
 * default; docs/deploy.md "Listeners"). FreeSWITCH's documents are served here and only here:
 * the directory holds every SIP password, so it does not share the API's listener, whose
 * address is meant for application servers. Anything but the xml_curl route is a plain 404.
 *
 * `guard` runs before the route: the daemon gives it this listener's own failed-authentication
 * throttle (src/api/throttle.ts), separate from the API's, so that a local API client guessing
 * tokens does not lock FreeSWITCH (also on loopback) out of its documents. A refused request
 * is a non-200 for mod_xml_curl, which then falls back like for any HTTP error
 * (test/fixtures/freeswitch/xml_curl/13-http-500-dialplan.txt).
 */
import Koa, { type Middleware } from 'koa'
import type Router from '@koa/router'
import type { Logger } from '../util/logger.js'

export interface XmlCurlListenerDeps {
  /** The xml_curl route (router.ts xmlCurlRouter). */
  readonly router: Router
  /** Runs before the route: the listener's authentication throttle. */
  readonly guard?: Middleware
  readonly logger: Logger
}

export function createXmlCurlApp(deps: XmlCurlListenerDeps): Koa {
  const app = new Koa()
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (e) {
      // The route answers every failure itself; this is a bug, and FreeSWITCH gets a bare 500.
      deps.logger.error({ err: e }, 'xml_curl request failed with an exception')
      ctx.status = 500
      ctx.body = ''
    }
  })
  if (deps.guard !== undefined) app.use(deps.guard)
  app.use(deps.router.routes())
  app.use(deps.router.allowedMethods())
  // Errors Koa sees itself (FreeSWITCH went away while the reply streamed) go to our log, not stderr.
  app.on('error', (e: unknown) => deps.logger.warn({ err: e }, 'xml_curl response error'))
  return app
}
