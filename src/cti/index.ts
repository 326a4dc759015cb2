/**
 * WebSocket CTI (docs/cti.md): live channel notifications and channel control for web
 * applications.
 *
 * - `POST {prefix}/gen_ws_ticket` (Basic auth): a one-time ticket for one exact ws_cti URI.
 * - `GET {prefix}/ws_cti?app_name=...&user_name=...` (Basic auth or `ticket=`): the WebSocket.
 *
 * The channels are the daemon's one channel model (src/channels), which follows FreeSWITCH's
 * events and re-reads the live channels after every ESL (re)connection; the hub fans its changes
 * out to the subscribers that may see them (view.ts: what a subscriber sees of a channel). In a
 * cluster, the other boxes' channels join the view and their commands go to their node (peers.ts).
 */
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import Router from '@koa/router'
import { WebSocketServer, type ServerOptions } from 'ws'
import { WWW_AUTHENTICATE, authenticate } from '../api/auth.js'
import { createBodyReader } from '../api/body.js'
import { apiError, errorBody, statusOf, type ApiError } from '../api/errors.js'
import { asBody, has, missing, rejectUnknown, resolveUser } from '../api/params.js'
import type { LiveCalls } from '../api/calls/routes.js'
import type { ChannelModel } from '../channels/index.js'
import type { Runtime } from '../runtime/store.js'
import type { PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { claimedDomain, type AuthThrottle } from '../api/throttle.js'
import { admit } from './admission.js'
import { Control, MAX_INFLIGHT, type CtiCommands } from './control.js'
import { eslCommands } from './esl.js'
import { Hub } from './hub.js'
import { createLiveCalls } from './live-calls.js'
import type { LegRecordings } from '../api/calls/record.js'
import type { CtiPeers } from './peers.js'
import { parseTarget, parseTicketRequest } from './query.js'
import { TicketStore } from './tickets.js'

export type { CtiCommands, CommandProblem, HangupCause } from './control.js'

export interface CtiDeps {
  runtime: () => Runtime
  pbx: PbxClient
  /** The live channels (created once by the daemon, shared with origination). */
  channels: ChannelModel
  logger: Logger
  /** ESL command builders; pbx/commands.ts by default. */
  commands?: CtiCommands
  /** Clock (epoch ms) for tickets; Date.now by default. */
  now?: () => number
  /** The other boxes' channels, in a cluster (src/cluster/cti-view.ts through peers.ts); absent on a single node. */
  peers?: CtiPeers
  /** The API listener's failed-authentication throttle (api/throttle.ts): checked before an upgrade is admitted, told of its failures. */
  throttle?: AuthThrottle
  /** The recordings, for the live calls' record command (api/calls/record.ts). */
  recordings?: LegRecordings
}

export interface Cti {
  /** `POST {prefix}/gen_ws_ticket`. */
  router: Router
  /** The live calls of the HTTP API (api/calls/), with CTI's view and command policy (live-calls.ts). */
  calls: LiveCalls
  /** Handles the HTTP 'upgrade' of `{prefix}/ws_cti` (and answers 404 to other upgrades if no one else listens). */
  attach(server: Server): void
  close(): Promise<void>
  /** Live channels known (all domains). */
  channelCount(): number
  /** Open WebSocket subscribers. */
  connectionCount(): number
}

/** Largest command frame a client may send (a command is a few hundred bytes). */
const MAX_COMMAND_BYTES = 16 * 1024
const TICKET_BODY_LIMIT = 16 * 1024
/** Time given to subscribers to complete the close handshake at shutdown. */
const CLOSE_GRACE_MS = 2000
/** Time ws waits for a closing peer (slow consumers, refused ones) before destroying the socket. */
const WS_CLOSE_TIMEOUT_MS = 5000

function rejectUpgrade(socket: Duplex, e: ApiError, extraHeaders: readonly string[] = []): void {
  const status = statusOf(e)
  const body = JSON.stringify(errorBody(e))
  const reason = STATUS_CODES[status] ?? 'Error'
  const headers = [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
    ...(status === 401 ? [`WWW-Authenticate: ${WWW_AUTHENTICATE}`] : []),
    ...extraHeaders,
  ]
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`)
}

export function createCti(deps: CtiDeps): Cti {
  const { runtime, pbx, channels, logger } = deps
  const now = deps.now ?? Date.now
  const commands = deps.commands ?? eslCommands
  const settings = () => runtime().config.daemon.cti
  // The prefix is read once, like the API's: changing it takes a restart.
  const prefix = runtime().config.daemon.http.prefix
  const wsPath = `${prefix}/ws_cti`

  const tickets = new TicketStore(now)
  const peers = deps.peers
  const control = new Control({ channels, pbx, commands, directory: () => runtime().directory, logger, ...(peers !== undefined ? { peers } : {}) })
  const hub: Hub = new Hub({
    channels,
    logger,
    settings,
    ...(peers !== undefined ? { peers } : {}),
    onMessage: (sub, data, isBinary) => {
      if (sub.inflight >= MAX_INFLIGHT) return hub.send(sub, Control.busy(data, isBinary))
      sub.inflight += 1
      control
        .handle({ domain: sub.domain, userId: sub.userId, credential: sub.credential, readOnly: sub.readOnly }, data, isBinary)
        .then((frame) => hub.send(sub, frame))
        .catch((e: unknown) => logger.error({ err: e }, 'cti command crashed'))
        .finally(() => {
          sub.inflight -= 1
        })
    },
  })

  const unsubscribeChannels = channels.onChange((change) => hub.publish(change))
  peers?.attach(
    {
      channels: () => hub.shared(runtime().config.domains.map((d) => d.name)),
      // A command a peer forwarded: this box's channels only, never handed on again.
      command: (source, frame) => control.handle(source, Buffer.from(frame, 'utf8'), false, 'local'),
    },
    (change) => hub.publishRemote(change),
  )

  const router = new Router({ prefix })
  const readBody = createBodyReader()
  router.post('/gen_ws_ticket', async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    const fail = (e: ApiError): void => {
      if (e.id === 'unauthorized') ctx.set('WWW-Authenticate', WWW_AUTHENTICATE)
      ctx.status = statusOf(e)
      ctx.body = errorBody(e)
    }
    const r = runtime()
    // Credentials before the body: an unauthenticated client gets nothing parsed.
    const domain = authenticate(ctx.headers.authorization, r.directory)
    if (!domain.ok) return fail(domain.error)
    const raw = await readBody(ctx, TICKET_BODY_LIMIT)
    if (!raw.ok) return fail(raw.error)
    const body = asBody(raw.value)
    if (!body.ok) return fail(body.error)
    const known = rejectUnknown(body.value, ['uri'])
    if (!known.ok) return fail(known.error)
    if (!has(body.value, 'uri')) return fail(missing('uri', 'is required: the ws_cti URI (path and query) the ticket is for'))
    const request = parseTicketRequest(body.value.uri, wsPath)
    if (!request.ok) return fail(request.error)
    // The user must exist now: a ticket that can only fail is refused at once.
    const user = resolveUser(request.value.query.user, domain.value)
    if (!user.ok) return fail(user.error)
    const ticket = tickets.issue(domain.value.name.toLowerCase(), request.value.uri, settings().ticket_ttl_ms)
    logger.info({ domain: domain.value.name, user_id: user.value?.id }, 'cti ticket issued')
    ctx.body = { result_code: 0, ticket }
  })

  // closeTimeout is a ws 8 server option that @types/ws does not list yet.
  const wsOptions: ServerOptions & { closeTimeout: number } = { noServer: true, maxPayload: MAX_COMMAND_BYTES, closeTimeout: WS_CLOSE_TIMEOUT_MS }
  const wss = new WebSocketServer(wsOptions)
  const attached: Array<{ server: Server; listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void }> = []
  let pingTimer: NodeJS.Timeout | undefined
  let closed = false

  const attach = (server: Server): void => {
    const listener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      socket.on('error', (e) => logger.debug({ err: e.message }, 'cti upgrade socket error'))
      const url = parseTarget(req.url ?? '')
      if (url?.pathname !== wsPath) {
        // Another part may own this path; answer only when no one else listens for upgrades.
        if (server.listenerCount('upgrade') === 1) rejectUpgrade(socket, apiError('not_found', 'no WebSocket endpoint at this path'))
        return
      }
      if (closed) return rejectUpgrade(socket, apiError('pbx_unavailable', 'the daemon is stopping'))
      // A client blocked for failed authentications is answered 429 before any ticket or token is looked at.
      const blocked = deps.throttle?.blocked(req.socket.remoteAddress)
      if (blocked !== undefined) {
        logger.info({ error: blocked.error.id }, 'cti connection refused')
        return rejectUpgrade(socket, blocked.error, [`Retry-After: ${blocked.retryAfterSec}`])
      }
      const admitted = admit(req, url, runtime().directory, tickets)
      if (!admitted.ok) {
        logger.info({ error: admitted.error.id }, 'cti connection refused')
        if (admitted.error.id === 'unauthorized') deps.throttle?.failed(req.socket.remoteAddress, claimedDomain(req.headers.authorization))
        return rejectUpgrade(socket, admitted.error)
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        if (closed) return ws.close(1001, 'server_shutdown')
        hub.add(ws, admitted.value)
      })
    }
    server.on('upgrade', listener)
    attached.push({ server, listener })
    if (pingTimer === undefined) {
      pingTimer = setInterval(() => {
        hub.ping()
        tickets.sweep()
      }, settings().ping_interval_ms)
    }
  }

  return {
    router,
    calls: createLiveCalls({ channels, pbx, commands, logger, ...(deps.recordings !== undefined ? { recordings: deps.recordings } : {}) }),
    attach,
    channelCount: () => channels.size,
    connectionCount: () => hub.size,
    close: async () => {
      if (closed) return
      closed = true
      clearInterval(pingTimer)
      unsubscribeChannels()
      for (const { server, listener } of attached) server.off('upgrade', listener)
      tickets.clear()
      await hub.closeAll(CLOSE_GRACE_MS)
      await new Promise<void>((resolve) => wss.close(() => resolve()))
    },
  }
}
