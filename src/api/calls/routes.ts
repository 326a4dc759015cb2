/**
 * The domain's live calls over the API (issue 29 item 2; docs/api.md "Live calls"), with the
 * domain's token like the operations:
 *
 * - `GET {prefix}/calls?request_id=&user=` → `{result_code: 0, calls: [...]}`;
 * - `GET {prefix}/calls/{uuid}` → `{result_code: 0, call}`;
 * - `POST {prefix}/calls/{uuid}/{hangup|transfer|dtmf|hold|unhold}` → `{result_code: 0}`;
 * - `POST {prefix}/calls/{uuid}/record` `{action: start|stop}` → `{result_code: 0, recording}` on
 *   start (the new recording's record), `{result_code: 0}` on stop (cti/record.ts).
 *
 * The calls are the channel model's live legs as CTI shows them, and the commands are CTI's own
 * (cti/call-control.ts, the one policy of channel control), reached through LiveCalls, which the
 * daemon plugs in (cti/live-calls.ts): this layer only reads HTTP. Another domain's UUID, a
 * malformed one and a missing one all answer 404 channel_not_found, and then nothing reaches
 * FreeSWITCH.
 */
import Router from '@koa/router'
import type { Context } from 'koa'
import type { DomainDirectory } from '../../directory/directory.js'
import type { Runtime } from '../../runtime/store.js'
import { ok, type Result } from '../../util/result.js'
import { domainOfRequest } from '../domain-route.js'
import type { BodyReader } from '../body.js'
import { apiError, type ApiError } from '../errors.js'
import { parseWith } from '../schema/parse.js'
import type { RecordingView } from '../../recording/view.js'
import { commandSchemas, isChannelUuid, listQuerySchema, recordSchema, type CallCommand, type CallCommandName, type CallView, type RecordAction } from './schema.js'

/** Which live legs a list shows: the domain's, narrowed to one request and/or one user (by id). */
export interface CallFilter {
  readonly requestId?: string
  readonly userId?: string
}

/** The live calls of a domain and the commands on them (cti/live-calls.ts). */
export interface LiveCalls {
  list(domain: string, filter: CallFilter): readonly CallView[]
  /** The leg, if it is live and of this domain. */
  get(domain: string, uuid: string): CallView | undefined
  /** Runs the command on the domain's leg; channel_not_found for any other. */
  command(domain: DomainDirectory, uuid: string, command: CallCommand): Promise<Result<void, ApiError>>
  /**
   * Starts (answering the new recording) or stops (undefined) recording the domain's leg, as its
   * recording policy allows; channel_not_found for any other leg.
   */
  record(domain: DomainDirectory, uuid: string, action: RecordAction): Promise<Result<RecordingView | undefined, ApiError>>
}

export interface CallsRouterDeps {
  readonly prefix: string
  readonly runtime: () => Runtime
  readonly calls: LiveCalls
  readonly readBody: BodyReader
  /** Answers an error (api/app.ts: the status of errors.ts, the error body, the log line's id). */
  readonly fail: (ctx: Context, e: ApiError) => void
  /** The request's domain, for its log line and metrics. */
  readonly authenticated: (ctx: Context, domain: string) => void
}

/** The same words whether the channel is missing, another domain's or not a UUID at all. */
const channelNotFound = (uuid: string): ApiError =>
  apiError('channel_not_found', `no live channel ${JSON.stringify(uuid.slice(0, 64))} in this domain`)

const COMMANDS = Object.keys(commandSchemas) as CallCommandName[]

export function callsRouter(deps: CallsRouterDeps): Router {
  const router = new Router({ prefix: `${deps.prefix}/calls` })

  const domainOf = (ctx: Context): DomainDirectory | undefined => domainOfRequest(ctx, deps)

  router.get('/', (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const query = parseWith(listQuerySchema, { ...ctx.query })
    if (!query.ok) return deps.fail(ctx, query.error)
    let userId: string | undefined
    if (query.value.user !== undefined) {
      const user = domain.userByName(query.value.user)
      if (user === undefined) return deps.fail(ctx, apiError('user_not_found', 'user names no user of this domain'))
      userId = user.id
    }
    const calls = deps.calls.list(domain.name, {
      ...(query.value.request_id !== undefined ? { requestId: query.value.request_id } : {}),
      ...(userId !== undefined ? { userId } : {}),
    })
    ctx.body = { result_code: 0, calls }
  })

  router.get('/:uuid', (ctx) => {
    const domain = domainOf(ctx)
    if (domain === undefined) return
    const uuid = ctx.params['uuid'] ?? ''
    const call = isChannelUuid(uuid) ? deps.calls.get(domain.name, uuid) : undefined
    if (call === undefined) return deps.fail(ctx, channelNotFound(uuid))
    ctx.body = { result_code: 0, call }
  })

  /** The command's body: JSON like every request, or none for a command with nothing to say (`{}`). */
  const bodyOf = async (ctx: Context): Promise<Result<unknown, ApiError>> => {
    const empty = ctx.get('transfer-encoding') === '' && (ctx.request.length ?? 0) === 0
    return empty ? ok<unknown>({}) : await deps.readBody(ctx, deps.runtime().config.daemon.http.body_limit)
  }

  /** What a command on a leg reads first: the domain, the body, a well-formed UUID. Undefined: the reply is sent (an error). */
  const commandRequest = async (ctx: Context): Promise<{ domain: DomainDirectory; uuid: string; body: unknown } | undefined> => {
    const domain = domainOf(ctx)
    if (domain === undefined) return undefined
    const uuid = ctx.params['uuid'] ?? ''
    const body = await bodyOf(ctx)
    if (!body.ok) return void deps.fail(ctx, body.error)
    if (!isChannelUuid(uuid)) return void deps.fail(ctx, channelNotFound(uuid))
    return { domain, uuid, body: body.value }
  }

  for (const name of COMMANDS) {
    router.post(`/:uuid/${name}`, async (ctx) => {
      const req = await commandRequest(ctx)
      if (req === undefined) return
      const command = commandOf(name, req.body)
      if (!command.ok) return deps.fail(ctx, command.error)
      const done = await deps.calls.command(req.domain, req.uuid, command.value)
      if (!done.ok) return deps.fail(ctx, done.error)
      ctx.body = { result_code: 0 }
    })
  }

  router.post('/:uuid/record', async (ctx) => {
    const req = await commandRequest(ctx)
    if (req === undefined) return
    const asked = parseWith(recordSchema, req.body)
    if (!asked.ok) return deps.fail(ctx, asked.error)
    const done = await deps.calls.record(req.domain, req.uuid, asked.value.action)
    if (!done.ok) return deps.fail(ctx, done.error)
    ctx.body = done.value === undefined ? { result_code: 0 } : { result_code: 0, recording: done.value }
  })

  return router
}

/** The body of a command, checked against its schema. */
function commandOf(name: CallCommandName, body: unknown): Result<CallCommand, ApiError> {
  switch (name) {
    case 'hangup': {
      const p = parseWith(commandSchemas.hangup, body)
      return p.ok ? ok<CallCommand>({ kind: 'hangup', ...(p.value.cause !== undefined ? { cause: p.value.cause } : {}) }) : p
    }
    case 'transfer': {
      const p = parseWith(commandSchemas.transfer, body)
      return p.ok ? ok<CallCommand>({ kind: 'transfer', destination: p.value.destination }) : p
    }
    case 'dtmf': {
      const p = parseWith(commandSchemas.dtmf, body)
      return p.ok ? ok<CallCommand>({ kind: 'dtmf', digits: p.value.digits }) : p
    }
    case 'hold':
    case 'unhold': {
      const p = parseWith(commandSchemas[name], body)
      return p.ok ? ok<CallCommand>({ kind: name }) : p
    }
  }
}
