/**
 * The HTTP side of the daemon: the four operations under `http.prefix`, /healthz, and the
 * routers other parts bring (CTI tickets; metrics and the live calls page, which compare no
 * credential and so are served even to a throttled address) mounted as they are.
 *
 * Per API request: authenticate (before the body is read), read the JSON body, validate and
 * resolve it into a plan (a pure function per operation), hand the plan to the engine.
 * Every failure is `{result_code: 500, error: {id, description}}` with the status of
 * errors.ts; an exception never shows its stack to the client (it goes to the log).
 * One log line per request.
 */
import { randomUUID } from 'node:crypto'
import Koa, { type Context } from 'koa'
import Router from '@koa/router'
import { allowListOf } from '../net/allow-list.js'
import type { Runtime } from '../runtime/store.js'
import { acceptedIsUrgent, type AcceptedRequest, type Journal } from '../journal/types.js'
import type { OriginationEngine, Operation } from '../origination/plan.js'
import type { PbxHealth } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { authenticate, WWW_AUTHENTICATE } from './auth.js'
import { createBodyReader } from './body.js'
import { apiError, errorBody, statusOf, type ApiError, type ApiErrorId } from './errors.js'
import { IDEMPOTENCY_HEADER, IdempotencyStore, parseIdempotencyKey, REPLAYED_HEADER, requestDigest, type Claim } from './idempotency.js'
import { OPERATIONS } from './operations/index.js'
import { apiErrorOfRefusal } from './refusals.js'
import { openApiRouter } from './openapi/router.js'
import { recordingsRouter, type RecordingReader } from './recordings/routes.js'
import { callsRouter, type LiveCalls } from './calls/routes.js'
import { recentCallsRouter, type RecentCallsDeps } from './calls/recent.js'
import { callbackUrlRefusal } from './schema/url.js'
import { authThrottleMiddleware, type AuthThrottle } from './throttle.js'
import { placedReply } from './unsettled-intents.js'

export interface AppDeps {
  /** Current configuration and directory, read per request (SIGHUP swaps it). */
  runtime: () => Runtime
  engine: OriginationEngine
  health: PbxHealth
  logger: Logger
  /** Accepted requests are durable here before their 200 (docs/callbacks.md "Durability"); absent only in API-alone tests. */
  journal?: Pick<Journal, 'accepted'>
  /** Idempotency-Key replies (idempotency.ts), loaded from the journal at start; an empty one by default. */
  idempotency?: IdempotencyStore
  /** The recordings on disk (src/recording/), served under {prefix}/recordings; absent only in API-alone tests (the routes then answer 404). */
  recordings?: RecordingReader
  /** The live calls (cti/live-calls.ts), served under {prefix}/calls; absent only in API-alone tests (the routes then answer 404). */
  calls?: LiveCalls
  /** The finished calls and channel samples of the live calls page (channels/call-history.ts, channel-samples.ts), served by calls/recent.ts; absent only in API-alone tests. */
  recent?: Pick<RecentCallsDeps, 'history' | 'samples'>
  /** Extra routers mounted as they are (CTI tickets...), outside the API auth, behind the throttle. */
  routers?: Router[]
  /**
   * Routers whose routes compare no credential (the metrics, the live calls page's files):
   * mounted before the throttle, like /healthz and the OpenAPI document, so that an address
   * blocked for failed authentications is still monitored (throttle.ts). A route that reads
   * Authorization must never be given here.
   */
  publicRouters?: Router[]
  /** Failed-authentication throttle of this listener (throttle.ts), checked before every route that compares credentials; absent only in tests. */
  throttle?: AuthThrottle
  newRequestId?: () => string
  /** Told of every request once it is answered (the daemon's metrics, src/metrics/); must not throw. */
  onRequest?: (r: RequestRecord) => void
  /**
   * In a cluster (src/cluster/forward.ts, docs/cluster.md "Registrations everywhere"): a call_user
   * whose user has no terminal on this box is handed to the nodes whose box may have one; the
   * first reply that is not `user_not_registered` is the answer. Undefined: none has the user.
   */
  forwardUnregistered?: (req: ForwardedRequest) => Promise<ForwardedReply | undefined>
}

/** A request another node is asked to place: the client's own body and credentials. */
export interface ForwardedRequest {
  readonly operation: Operation
  readonly authorization: string
  readonly body: unknown
  readonly requestId: string
  /** The request's domain and the user whose terminals were looked up: a cluster asks the nodes that published them first. */
  readonly domain: string
  readonly userName?: string
}

export interface ForwardedReply {
  readonly status: number
  /** The reply body's bytes, returned as they are. */
  readonly body: string
}

/** Set on a forwarded request: the node it reaches answers from its own box only (one hop). */
export const FORWARDED_HEADER = 'X-Cod-Forwarded'

/** One answered request, as the metrics count it: no UUID, no number, no client text. */
export interface RequestRecord {
  /** The API operation, when the path named one. */
  readonly operation: Operation | undefined
  readonly method: string
  readonly path: string
  readonly status: number
  readonly errorId: ApiErrorId | undefined
  /** The authenticated domain, when the request got that far. */
  readonly domain: string | undefined
  readonly seconds: number
  /** How long FreeSWITCH took to accept the originate (engine.originate), when it was asked. */
  readonly originateSeconds: number | undefined
}

/** What the log line of a request says; filled in as the request goes. */
interface RequestInfo {
  readonly requestId: string
  readonly start: bigint
  domain?: string
  operation?: Operation
  errorId?: ApiErrorId
  uuids?: number
  /** Seconds engine.originate took, when it ran. */
  originateSeconds?: number
  /** Successful /healthz probes are logged at debug level: load balancers poll them. */
  quiet?: boolean
}

const INTERNAL = apiError('internal_error', 'internal error; the X-Request-Id of this reply identifies it in the daemon log')

/** The status of a thrown HTTP error (http-errors and Koa's ctx.throw), if it has one. */
function thrownStatus(e: unknown): { status: number; message?: string } | undefined {
  if (typeof e !== 'object' || e === null) return undefined
  const { status, expose, message } = e as { status?: unknown; expose?: unknown; message?: unknown }
  if (typeof status !== 'number') return undefined
  return { status, ...(expose === true && typeof message === 'string' ? { message } : {}) }
}

/** A thrown error (from an extra router, or a bug) as an ApiError; 5xx and unknown ones are internal. */
function fromThrown(e: unknown): ApiError {
  const t = thrownStatus(e)
  if (t === undefined || t.status < 400 || t.status >= 500) return INTERNAL
  const description = t.message ?? 'the request was refused'
  switch (t.status) {
    case 401:
      return apiError('unauthorized', description)
    case 404:
      return apiError('not_found', description)
    case 405:
      return apiError('method_not_allowed', description)
    case 413:
      return apiError('payload_too_large', description)
    case 415:
      return apiError('unsupported_media_type', description)
    default:
      return apiError('invalid_parameter', description)
  }
}

/**
 * A reply decided before the request's body was all read (401 before the body, 413 over the
 * limit, 415, 400 for a body that is not JSON, 429...): the rest of the body is still on its
 * way, and a keep-alive connection would be stuck behind it. Node drains a body nobody began
 * to read, but not one a reader began and stopped (the body parser pauses at the limit): the
 * client's next request on that connection then waited there until Node's keep-alive timeout
 * reset it (~5 s, ECONNRESET). So such a connection is closed after the reply
 * (`Connection: close`: the client opens another for its next request), and what still comes
 * is read and dropped until then, so that the client can read its reply.
 */
function closeAfterReply(ctx: Context): void {
  if (!ctx.headerSent) ctx.set('Connection', 'close')
  ctx.req.resume()
}

export function createApp(deps: AppDeps): Koa {
  const app = new Koa()
  const newRequestId = deps.newRequestId ?? randomUUID
  const readBody = createBodyReader()
  const idempotency = deps.idempotency ?? new IdempotencyStore()
  const infos = new WeakMap<Context, RequestInfo>()
  const infoOf = (ctx: Context): RequestInfo => {
    let info = infos.get(ctx)
    if (info === undefined) {
      info = { requestId: newRequestId(), start: process.hrtime.bigint() }
      infos.set(ctx, info)
    }
    return info
  }
  const fail = (ctx: Context, e: ApiError): void => {
    infoOf(ctx).errorId = e.id
    ctx.status = statusOf(e)
    ctx.body = errorBody(e)
  }

  const health = new Router()
  health.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    if (deps.health.isConnected()) {
      infoOf(ctx).quiet = true
      ctx.body = { status: 'ok', freeswitch: 'connected' }
    } else {
      ctx.status = 503
      ctx.body = { status: 'unavailable', freeswitch: 'disconnected' }
    }
  })

  // The prefix is read once: like the listen address, changing it takes a restart.
  const api = new Router({ prefix: deps.runtime().config.daemon.http.prefix })
  for (const operation of Object.keys(OPERATIONS) as Operation[]) {
    api.post(`/${operation}`, async (ctx) => {
      const info = infoOf(ctx)
      info.operation = operation
      ctx.set('Cache-Control', 'no-store')
      const runtime = deps.runtime()
      // Credentials before the body: an unauthenticated client gets nothing parsed.
      const domain = authenticate(ctx.headers.authorization, runtime.directory)
      if (!domain.ok) {
        ctx.set('WWW-Authenticate', WWW_AUTHENTICATE)
        return fail(ctx, domain.error)
      }
      info.domain = domain.value.name
      const key = parseIdempotencyKey(ctx.headers[IDEMPOTENCY_HEADER.toLowerCase()])
      if (!key.ok) return fail(ctx, key.error)
      const body = await readBody(ctx, runtime.config.daemon.http.body_limit)
      if (!body.ok) return fail(ctx, body.error)
      // A repeated key: the first reply again, or 409 for another request; a new one is placed below.
      let claim: Extract<Claim, { kind: 'new' }> | undefined
      let digest = ''
      if (key.value !== undefined) {
        digest = requestDigest(operation, body.value)
        const c = await idempotency.claim(domain.value.name, key.value, digest, info.requestId)
        if (c.kind === 'conflict') return fail(ctx, c.error)
        if (c.kind === 'replay') {
          ctx.set(REPLAYED_HEADER, 'true')
          ctx.type = 'application/json'
          ctx.body = c.reply
          return
        }
        claim = c
      }
      let reply: string | undefined
      try {
        const plan = OPERATIONS[operation](body.value, domain.value, info.requestId)
        if (!plan.ok) return fail(ctx, plan.error)
        // A callback_url naming a refused address (loopback, private, metadata...) is refused now, before anything is originated.
        const allow = allowListOf(runtime.config.daemon.callbacks.allow)
        const refusedCallback = callbackUrlRefusal(plan.value.callbackUrl, allow)
        if (refusedCallback !== undefined) return fail(ctx, refusedCallback)
        // The same for the request's recording_callback_url (the domain's own recording.callback_url is the operator's: judged at delivery).
        const recordingCallback = plan.value.recording?.callbackUrl
        const refusedRecordingCallback =
          recordingCallback !== domain.value.config.recording.callback_url ? callbackUrlRefusal(recordingCallback, allow, 'recording_callback_url') : undefined
        if (refusedRecordingCallback !== undefined) return fail(ctx, refusedRecordingCallback)
        // And its status_callback_url (docs/events.md).
        const refusedStatusCallback = callbackUrlRefusal(plan.value.status?.url, allow, 'status_callback_url')
        if (refusedStatusCallback !== undefined) return fail(ctx, refusedStatusCallback)
        const originateStart = process.hrtime.bigint()
        // The key goes with the plan into the journal's write-ahead record (origination/intents.ts).
        const placing = key.value === undefined ? plan.value : { ...plan.value, idempotency: { key: key.value, bodyDigest: digest } }
        // A client that goes away while its request waits for a channel (wait_ms) takes the request with it.
        const clientGone = new AbortController()
        ctx.res.once('close', () => {
          if (!ctx.res.writableEnded) clientGone.abort()
        })
        const accepted = await deps.engine.originate(placing, { clientGone: clientGone.signal })
        info.originateSeconds = Number(process.hrtime.bigint() - originateStart) / 1e9
        if (!accepted.ok) {
          const forwarded =
            accepted.error.reason === 'user_not_registered' && operation === 'call_user' && ctx.headers[FORWARDED_HEADER.toLowerCase()] === undefined
              ? await deps.forwardUnregistered?.({
                  operation,
                  authorization: ctx.headers.authorization ?? '',
                  body: body.value,
                  requestId: info.requestId,
                  domain: plan.value.domain,
                  ...(plan.value.originator.kind === 'user' ? { userName: plan.value.originator.user.name } : {}),
                })
              : undefined
          if (forwarded === undefined) return fail(ctx, apiErrorOfRefusal(accepted.error))
          // Another box has the user: its node placed the call (its journal, its result); its reply is ours.
          ctx.status = forwarded.status
          ctx.type = 'application/json'
          ctx.body = forwarded.body
          if (forwarded.status === 200) reply = forwarded.body
          return
        }
        // The call is placed: durable before the 200 (group commit) when a crash could lose
        // something of it, its result, its key or its status events (journal/types.ts acceptedIsUrgent).
        const p = plan.value
        const replyBody = placedReply(accepted.value.uuids)
        reply = JSON.stringify(replyBody)
        const record: AcceptedRequest = {
          requestId: p.requestId,
          domain: p.domain,
          operation,
          uuids: accepted.value.uuids,
          ...(p.callbackUrl !== undefined ? { callbackUrl: p.callbackUrl } : {}),
          answerDeadlineAt: Date.now() + p.answerTimeoutSec * 1000,
          ...(key.value !== undefined ? { idempotency: { key: key.value, bodyDigest: digest, reply } } : {}),
          // Its status events are followed across a restart from this (callbacks/status-events.ts).
          ...(p.status !== undefined ? { status: p.status } : {}),
        }
        const durable = deps.journal?.accepted(record)
        if (acceptedIsUrgent(record)) await durable
        info.uuids = accepted.value.uuids.length
        ctx.status = 200
        ctx.body = replyBody
      } finally {
        // Only a 200 is kept for the key: an error reply placed nothing, so the key may be tried again.
        claim?.settle(reply)
      }
    })
  }

  // The routers under the domain's token, like the operations (api/recordings/, api/calls/): each is
  // given the prefix, the runtime, the error reply, and how an authenticated request is logged.
  const tokenRoutes = {
    prefix: deps.runtime().config.daemon.http.prefix,
    runtime: deps.runtime,
    fail,
    authenticated: (ctx: Context, domain: string) => void (infoOf(ctx).domain = domain),
  }
  const recordings = deps.recordings === undefined ? undefined : recordingsRouter({ ...tokenRoutes, recordings: deps.recordings })
  const calls = deps.calls === undefined ? undefined : callsRouter({ ...tokenRoutes, calls: deps.calls, readBody })
  // The finished calls and channel samples of the live calls page (api/calls/recent.ts).
  const recent = deps.recent === undefined ? undefined : recentCallsRouter({ ...tokenRoutes, ...deps.recent })

  // The OpenAPI document is built here, once (api/openapi/).
  const openapi = openApiRouter(deps.runtime().config.daemon.http.prefix)
  const publicRouters: Router[] = [health, openapi, ...(deps.publicRouters ?? [])]
  const routers: Router[] = [...publicRouters, api, ...(recordings !== undefined ? [recordings] : []), ...(calls !== undefined ? [calls] : []), ...(recent !== undefined ? [recent] : []), ...(deps.routers ?? [])]

  /** Nothing answered: 405 (with Allow) when some route has this path, else 404. */
  const unmatched = (ctx: Context): void => {
    const allowed = new Set<string>()
    let routed = false
    for (const router of routers) {
      const m = router.match(ctx.path, ctx.method)
      for (const layer of m.path) for (const method of layer.methods) allowed.add(method)
      if (m.pathAndMethod.some((layer) => layer.methods.length > 0)) routed = true
    }
    if (allowed.size > 0 && !routed) {
      ctx.set('Allow', [...allowed].join(', '))
      return fail(ctx, apiError('method_not_allowed', `${ctx.method} is not allowed here; allowed: ${[...allowed].join(', ')}`))
    }
    fail(ctx, apiError('not_found', 'no endpoint at this path'))
  }

  app.use(async (ctx, next) => {
    const info = infoOf(ctx)
    ctx.set('X-Request-Id', info.requestId)
    try {
      await next()
      if (ctx.status === 404 && ctx.body == null) unmatched(ctx)
    } catch (e) {
      const error = fromThrown(e)
      if (error.id === 'internal_error') deps.logger.error({ err: e, req_id: info.requestId }, 'request failed with an exception')
      // Headers an inner layer set (e.g. Content-Type of a half-built reply) must not leak into the error reply.
      ctx.remove('Content-Type')
      ctx.remove('Content-Length')
      fail(ctx, error)
    } finally {
      if (!ctx.req.complete) closeAfterReply(ctx)
      const elapsed = Number(process.hrtime.bigint() - info.start) / 1e9
      deps.onRequest?.({
        operation: info.operation,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        errorId: info.errorId,
        domain: info.domain,
        seconds: elapsed,
        originateSeconds: info.originateSeconds,
      })
      const line = {
        req_id: info.requestId,
        method: ctx.method,
        path: ctx.path.slice(0, 256),
        domain: info.domain,
        operation: info.operation,
        status: ctx.status,
        error: info.errorId,
        uuids: info.uuids,
        ms: Math.round(elapsed * 1e4) / 10,
      }
      if (info.quiet === true) deps.logger.debug(line, 'http request')
      else deps.logger.info(line, 'http request')
    }
  })
  // Routes that compare no credential first: a throttled address is still monitored (/healthz,
  // /metrics, the OpenAPI document, /ui/): a block must not blind the monitoring of a listener.
  for (const router of publicRouters) app.use(router.routes())
  // Then every other route (all those that compare credentials, and unknown paths): a blocked
  // client gets 429 before any credential is compared.
  if (deps.throttle !== undefined) app.use(authThrottleMiddleware(deps.throttle, fail))
  for (const router of deps.routers ?? []) app.use(router.routes())
  app.use(api.routes())
  if (recordings !== undefined) app.use(recordings.routes())
  if (calls !== undefined) app.use(calls.routes())
  if (recent !== undefined) app.use(recent.routes())

  // Errors Koa sees itself (a client that went away while the reply streamed) go to our log, not stderr.
  app.on('error', (e: unknown) => deps.logger.warn({ err: e }, 'http response error'))
  return app
}
