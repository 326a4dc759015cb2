/**
 * Commands from CTI clients: hangup, park and transfer of a channel the connection may see,
 * within what its credential allows (policy.ts: a ticket acts on its own user's calls only).
 * A channel of another domain, one the user is not a party to, and one that does not exist all
 * get the same `channel_not_found` answer, so a client learns nothing about channels it may
 * not see. ESL text is written only by pbx/commands.ts (behind CtiCommands). What a client may do
 * to a channel and how FreeSWITCH's answer is read is call-control.ts, shared with the HTTP API's
 * live calls (live-calls.ts): this module reads the frames and applies the ticket rules.
 *
 * In a cluster (peers.ts), a channel of another box that the connection may see and act on is
 * handed to its node, which runs the command through its own Control (scope `local`: its own
 * channels only, never forwarded again) and whose result frame is the answer.
 */
import type { ApiError } from '../api/errors.js'
import type { ChannelModel } from '../channels/index.js'
import { isPlainObject, optionalTimeout, rejectUnknown } from '../api/params.js'
import type { Directory, DomainDirectory } from '../directory/directory.js'
import type { EslCommand, PbxClient } from '../pbx/types.js'
import type { Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { hangupCause, notFound, runOnChannel, transferExtension, visibleChannel, type HangupCause } from './call-control.js'
import { isVisible } from './view.js'
import { mayActOn, mayCommand, type CommandSource } from './policy.js'
import type { CtiPeers } from './peers.js'
import { COMMANDS, resultFrame, type CommandId, type CommandName, type CtiError } from './protocol.js'

/** Why pbx/commands.ts refused to build a command (its own validation). */
export interface CommandProblem {
  readonly description: string
}

/** The ESL commands CTI needs; the default wiring builds them with pbx/commands.ts. */
export interface CtiCommands {
  /** The commands that hang the channel up, run in order (it is marked hung up by the API first). */
  hangup(uuid: string, cause: HangupCause): Result<readonly EslCommand[], CommandProblem>
  /** `uuid_transfer <uuid> <extension> XML <context>`: the dialplan routes by destination number. */
  transfer(uuid: string, extension: string, context: string): Result<EslCommand, CommandProblem>
  /** The commands that park the channel, run in order (a timeout needs `park_timeout` set before the park). */
  park(uuid: string, timeoutSec: number | undefined): Result<readonly EslCommand[], CommandProblem>
}

export type { HangupCause } from './call-control.js'

/** Commands in flight per connection; more are refused rather than queued without bound. */
export const MAX_INFLIGHT = 16
const MAX_ID_LENGTH = 128

export interface ControlDeps {
  readonly channels: ChannelModel
  readonly pbx: PbxClient
  readonly commands: CtiCommands
  readonly directory: () => Directory
  readonly logger: Logger
  /** The other boxes' channels (a cluster); absent on a single node. */
  readonly peers?: CtiPeers
}

/** `any`: this box's channels, then the peers'; `local`: this box's only (a command a peer forwarded). */
export type CommandScope = 'any' | 'local'

type Plan =
  | { readonly kind: 'local'; readonly uuid: string; readonly commands: readonly EslCommand[] }
  | { readonly kind: 'remote'; readonly uuid: string; readonly node: string }

export type { CommandSource } from './policy.js'

interface Parsed {
  readonly id: CommandId | undefined
  readonly cmd: CommandName | undefined
  readonly body: Readonly<Record<string, unknown>> | undefined
}

const cerr = (id: CtiError['id'], description: string): CtiError => ({ id, description })
const fromApi = (e: ApiError): CtiError => ({ id: e.id, description: e.description })

/** Reads `id` and `cmd` as far as possible, so that even a refusal can be matched to its request. */
function parseFrame(data: Buffer, isBinary: boolean): Result<Parsed, { parsed: Parsed; error: CtiError }> {
  const none: Parsed = { id: undefined, cmd: undefined, body: undefined }
  if (isBinary) return err({ parsed: none, error: cerr('invalid_message', 'commands are JSON text frames') })
  let value: unknown
  try {
    value = JSON.parse(data.toString('utf8'))
  } catch {
    return err({ parsed: none, error: cerr('invalid_message', 'a command is a JSON object such as {"cmd":"hangup","uuid":"..."}') })
  }
  if (!isPlainObject(value)) return err({ parsed: none, error: cerr('invalid_message', 'a command is a JSON object') })
  const rawId = value.id
  let id: CommandId | undefined
  if (rawId !== undefined) {
    if ((typeof rawId === 'string' && rawId.length <= MAX_ID_LENGTH) || (typeof rawId === 'number' && Number.isFinite(rawId))) id = rawId
    else return err({ parsed: none, error: cerr('invalid_parameter', `id: must be a number or a string of at most ${MAX_ID_LENGTH} characters`) })
  }
  const cmd = COMMANDS.find((c) => c === value.cmd)
  if (cmd === undefined) {
    return err({ parsed: { id, cmd: undefined, body: value }, error: cerr('invalid_parameter', `cmd: must be one of ${COMMANDS.join(', ')}`) })
  }
  return ok({ id, cmd, body: value })
}

const ALLOWED: Record<CommandName, readonly string[]> = {
  hangup: ['id', 'cmd', 'uuid', 'cause'],
  park: ['id', 'cmd', 'uuid', 'timeout'],
  transfer: ['id', 'cmd', 'uuid', 'destination'],
}

export class Control {
  constructor(private readonly deps: ControlDeps) {}

  /** Handles one client frame; resolves with the result frame to send back. */
  async handle(source: CommandSource, data: Buffer, isBinary: boolean, scope: CommandScope = 'any'): Promise<string> {
    const parsed = parseFrame(data, isBinary)
    if (!parsed.ok) return resultFrame(parsed.error.parsed.id, parsed.error.parsed.cmd, parsed.error.error)
    const { id, cmd, body } = parsed.value
    if (cmd === undefined || body === undefined) return resultFrame(id, cmd, cerr('invalid_message', 'no command'))
    // Before any channel is looked up: a read-only connection learns nothing from a refusal.
    const may = mayCommand(source.readOnly)
    if (!may.ok) return resultFrame(id, cmd, may.error)
    const planned = this.plan(source, cmd, body, scope)
    if (!planned.ok) return resultFrame(id, cmd, planned.error)
    if (planned.value.kind === 'remote') {
      const { node, uuid } = planned.value
      this.deps.logger.info({ cmd, uuid, node, domain: source.domain }, 'cti command handed to the node that owns the channel')
      // The client's frame as parsed: the node checks and runs it as if its client had sent it.
      return (
        this.deps.peers?.command(node, source, JSON.stringify(body), (description) => resultFrame(id, cmd, cerr('cluster_unavailable', description))) ??
        resultFrame(id, cmd, notFound(uuid))
      )
    }
    const ran = await this.run(planned.value.uuid, planned.value.commands)
    if (!ran.ok) {
      this.deps.logger.info({ cmd, uuid: planned.value.uuid, error: ran.error.id }, 'cti command failed')
      return resultFrame(id, cmd, ran.error)
    }
    this.deps.logger.info({ cmd, uuid: planned.value.uuid, domain: source.domain }, 'cti command done')
    return resultFrame(id, cmd)
  }

  /** A refusal for a connection that has too many commands in flight. */
  static busy(data: Buffer, isBinary: boolean): string {
    const parsed = parseFrame(data, isBinary)
    const p = parsed.ok ? parsed.value : parsed.error.parsed
    return resultFrame(p.id, p.cmd, cerr('too_many_requests', `at most ${MAX_INFLIGHT} commands may wait for their result on one connection`))
  }

  private plan(
    source: CommandSource,
    cmd: CommandName,
    body: Readonly<Record<string, unknown>>,
    scope: CommandScope,
  ): Result<Plan, CtiError> {
    const known = rejectUnknown(body, ALLOWED[cmd])
    if (!known.ok) return err(fromApi(known.error))
    const uuid = body.uuid
    if (uuid === undefined) return err(cerr('missing_parameter', 'uuid is required'))
    if (typeof uuid !== 'string' || uuid === '') return err(cerr('invalid_parameter', 'uuid: must be a channel UUID string'))
    if (this.deps.channels.get(uuid) === undefined) {
      // Another box's channel: the same visibility and policy here (nothing is learnt about a
      // channel the connection may not see), the rest is checked by its node on its own record.
      const remote = scope === 'any' ? this.deps.peers?.channel(uuid) : undefined
      if (remote === undefined || !isVisible(remote, source.domain, source.userId)) return err(notFound(uuid))
      const may = mayActOn(remote, source.credential, source.userId)
      return may.ok ? ok({ kind: 'remote', uuid, node: remote.node }) : may
    }
    const visible = visibleChannel(this.deps.channels, uuid, source)
    if (!visible.ok) return visible
    const ch = visible.value
    const domain = this.deps.directory().domain(source.domain)
    if (domain === undefined) return err(notFound(uuid))
    const may = mayActOn(ch, source.credential, source.userId)
    if (!may.ok) return may

    const commands = this.build(source, cmd, uuid, body, domain)
    if (!commands.ok) return commands
    return ok({ kind: 'local', uuid, commands: commands.value })
  }

  private build(
    source: CommandSource,
    cmd: CommandName,
    uuid: string,
    body: Readonly<Record<string, unknown>>,
    domain: DomainDirectory,
  ): Result<readonly EslCommand[], CtiError> {
    const one = (r: Result<EslCommand, CommandProblem>): Result<readonly EslCommand[], CtiError> =>
      r.ok ? ok([r.value]) : err(cerr('invalid_parameter', r.error.description))
    switch (cmd) {
      case 'hangup': {
        const c = hangupCause(body.cause)
        if (!c.ok) return c
        const r = this.deps.commands.hangup(uuid, c.value)
        return r.ok ? r : err(cerr('invalid_parameter', r.error.description))
      }
      case 'park': {
        const timeout = optionalTimeout(body, 'timeout')
        if (!timeout.ok) return err(fromApi(timeout.error))
        const r = this.deps.commands.park(uuid, timeout.value)
        return r.ok ? r : err(cerr('invalid_parameter', r.error.description))
      }
      case 'transfer': {
        const extension = transferExtension(body.destination, source.credential, domain)
        return extension.ok ? one(this.deps.commands.transfer(uuid, extension.value, domain.name)) : extension
      }
    }
  }

  private run(uuid: string, commands: readonly EslCommand[]): Promise<Result<void, CtiError>> {
    return runOnChannel(this.deps.pbx, uuid, commands)
  }
}
