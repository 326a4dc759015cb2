/**
 * The HTTP API's live calls (api/calls/ LiveCalls), made of CTI's parts: the legs are the
 * channel model's as CTI shows them (view.ts viewOf, the same object a subscriber gets), and the
 * commands go through call-control.ts, the policy CTI's own commands follow, with the powers of
 * the domain's API token (a CTI connection authenticated with it could do the same).
 *
 * This box's channels only: in a cluster a leg on another box answers channel_not_found here
 * (CTI's commands reach it through its node; the HTTP routes do not forward).
 *
 * The record command (api/calls/record.ts) is the API's own: CTI has none; it reaches the legs and
 * FreeSWITCH through the same policy (visibleChannel, runOnChannel).
 */
import type { LiveCalls } from '../api/calls/routes.js'
import type { CallCommand, CallView } from '../api/calls/schema.js'
import type { ApiError } from '../api/errors.js'
import type { ChannelModel } from '../channels/index.js'
import { createLegRecorder, type LegRecordings } from '../api/calls/record.js'
import { uuidHold, uuidRecvDtmf } from '../pbx/commands.js'
import type { EslCommand, PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { hangupCause, refusedValue, runOnChannel, transferExtension, visibleChannel } from './call-control.js'
import type { CommandProblem, CtiCommands } from './control.js'
import type { ChannelView, CtiError } from './protocol.js'
import { isVisible, viewOf } from './view.js'

export interface LiveCallsDeps {
  readonly channels: ChannelModel
  readonly pbx: PbxClient
  /** The same builders as CTI's commands (pbx/commands.ts by default). */
  readonly commands: CtiCommands
  readonly logger: Logger
  /** The recordings (src/recording): where the record command's files and records go; without it, the command answers internal_error. */
  readonly recordings?: LegRecordings
}

/** CTI-only ids never come out of these commands; the rest are the API's own. */
const asApi = (e: CtiError): ApiError =>
  e.id === 'invalid_message' || e.id === 'permission_denied' ? { id: 'invalid_parameter', description: e.description } : { id: e.id, description: e.description }

const problem = (r: Result<EslCommand, CommandProblem>): Result<readonly EslCommand[], CtiError> =>
  r.ok ? ok([r.value]) : err({ id: 'invalid_parameter', description: r.error.description })

/**
 * CTI's ChannelView and the API's CallView (api/calls/schema.ts, which cannot import CTI) are one
 * object: a field that one has and the other lacks does not compile here.
 */
const SAME_FIELDS: [Exclude<keyof ChannelView, keyof CallView>, Exclude<keyof CallView, keyof ChannelView>] extends [never, never] ? true : never = true

export function createLiveCalls(deps: LiveCallsDeps): LiveCalls {
  void SAME_FIELDS
  const view = (ch: Parameters<typeof viewOf>[0]): CallView => viewOf(ch)
  const recorder = createLegRecorder({
    channels: deps.channels,
    logger: deps.logger,
    ...(deps.recordings !== undefined ? { recordings: deps.recordings } : {}),
    find: (domain, uuid) => {
      const ch = visibleChannel(deps.channels, uuid, { domain, userId: undefined })
      return ch.ok ? ch.value : undefined
    },
    run: async (uuid, commands) => {
      const ran = await runOnChannel(deps.pbx, uuid, commands)
      return ran.ok ? ok(undefined) : err(asApi(ran.error))
    },
  })
  return {
    list(domain, filter) {
      const out: CallView[] = []
      for (const ch of deps.channels.liveChannels(domain)) {
        if (!isVisible(ch, domain, filter.userId)) continue
        if (filter.requestId !== undefined && ch.requestId !== filter.requestId) continue
        out.push(view(ch))
      }
      return out.sort((a, b) => a.offer_at - b.offer_at || a.uuid.localeCompare(b.uuid))
    },

    get(domain, uuid) {
      const ch = visibleChannel(deps.channels, uuid, { domain, userId: undefined })
      return ch.ok && ch.value.hangupAt === undefined ? view(ch.value) : undefined
    },

    async command(domain, uuid, command: CallCommand) {
      const owner = { domain: domain.name, userId: undefined }
      const ch = visibleChannel(deps.channels, uuid, owner)
      if (!ch.ok) return err(asApi(ch.error))
      const built = build(deps.commands, domain, uuid, command)
      if (!built.ok) return err(asApi(built.error))
      const ran = await runOnChannel(deps.pbx, uuid, built.value)
      deps.logger.info({ cmd: command.kind, uuid, domain: domain.name, ...(ran.ok ? {} : { error: ran.error.id }) }, ran.ok ? 'api call command done' : 'api call command failed')
      return ran.ok ? ok(undefined) : err(asApi(ran.error))
    },

    record: recorder.record,
  }
}

function build(commands: CtiCommands, domain: Parameters<LiveCalls['command']>[0], uuid: string, command: CallCommand): Result<readonly EslCommand[], CtiError> {
  switch (command.kind) {
    case 'hangup': {
      const c = hangupCause(command.cause)
      if (!c.ok) return c
      const r = commands.hangup(uuid, c.value)
      return r.ok ? r : err({ id: 'invalid_parameter', description: r.error.description })
    }
    case 'transfer': {
      const extension = transferExtension(command.destination, 'token', domain)
      return extension.ok ? problem(commands.transfer(uuid, extension.value, domain.name)) : extension
    }
    case 'dtmf': {
      const c = uuidRecvDtmf(uuid, command.digits)
      return c.ok ? ok([c.value]) : err(refusedValue(c.error))
    }
    case 'hold':
    case 'unhold': {
      const c = uuidHold(uuid, command.kind === 'hold')
      return c.ok ? ok([c.value]) : err(refusedValue(c.error))
    }
  }
}
