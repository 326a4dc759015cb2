/**
 * The first step of every route that acts for a domain outside the four operations (the
 * recordings, the live calls): the domain's token checked (HTTP Basic, api/auth.ts), a 401 with its
 * challenge answered otherwise, the request's domain told to its log line and metrics, and replies
 * kept out of caches. One place, so that every such route refuses and logs alike.
 */
import type { Context } from 'koa'
import type { DomainDirectory } from '../directory/directory.js'
import type { Runtime } from '../runtime/store.js'
import { authenticate, WWW_AUTHENTICATE } from './auth.js'
import type { ApiError } from './errors.js'

export interface DomainRouteDeps {
  readonly runtime: () => Runtime
  /** Answers an error (api/app.ts: the status of errors.ts, the error body, the log line's id). */
  readonly fail: (ctx: Context, e: ApiError) => void
  /** The request's domain, for its log line and metrics. */
  readonly authenticated: (ctx: Context, domain: string) => void
}

/** The authenticated domain, or undefined once the 401 is answered. */
export function domainOfRequest(ctx: Context, deps: DomainRouteDeps): DomainDirectory | undefined {
  ctx.set('Cache-Control', 'no-store')
  const domain = authenticate(ctx.headers.authorization, deps.runtime().directory)
  if (!domain.ok) {
    ctx.set('WWW-Authenticate', WWW_AUTHENTICATE)
    deps.fail(ctx, domain.error)
    return undefined
  }
  deps.authenticated(ctx, domain.value.name)
  return domain.value
}
