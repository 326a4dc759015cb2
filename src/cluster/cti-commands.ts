/**
 * CTI commands on a channel of another box (docs/cluster.md "One CTI view"): the node a client
 * is connected to publishes the command on the owning node's command channel, with the
 * connection's identity (domain, user, credential, read_only); the owning node runs it through
 * its own CTI Control on its own channels (the same checks, replies and error ids as for its own
 * clients) and publishes the result frame back on the asking node's reply channel, which the
 * client gets as is.
 *
 * Over Redis rather than the node's HTTP API: the command must carry the connection's identity,
 * and a ticket connection has no token to send (nor does the hub keep a token connection's);
 * Redis is already as trusted as the nodes (docs/cluster.md "What is shared").
 *
 * A command nobody received (PUBLISH counted no subscriber: the node is stopping or cut off from
 * Redis) was not carried out; one received but not answered within `COMMAND_TIMEOUT_MS` may have
 * been. Both answer `cluster_unavailable`, saying which.
 */
import { randomUUID } from 'node:crypto'
import type { CommandSource, LocalCti } from '../cti/peers.js'
import type { Logger } from '../util/logger.js'
import type { ClusterConnection } from './connection.js'
import type { ClusterKeys } from './keys.js'
import { commandMessage, parseCommandMessage, parseReplyMessage, replyMessage } from './cti-wire.js'

/** A forwarded command waits this long for the owning node's answer (its ESL command's own timeout is shorter). */
const COMMAND_TIMEOUT_MS = 10_000

export interface CommandRelayDeps {
  readonly conn: ClusterConnection
  readonly keys: ClusterKeys
  readonly nodeId: string
  readonly logger: Logger
  readonly timeoutMs?: number
}

export interface CommandRelay {
  bind(local: LocalCti): void
  send(node: string, source: CommandSource, frame: string, unreachable: (description: string) => string): Promise<string>
  /** A message on this node's command channel. */
  onCommand(text: string): void
  /** A message on this node's reply channel. */
  onReply(text: string): void
  /** Answers every command still waiting (`cluster_unavailable`). */
  close(): void
}

interface Waiting {
  readonly resolve: (frame: string) => void
  readonly unreachable: (description: string) => string
  readonly timer: NodeJS.Timeout
}

export function commandRelay(deps: CommandRelayDeps): CommandRelay {
  const { conn, keys, nodeId, logger } = deps
  const timeoutMs = deps.timeoutMs ?? COMMAND_TIMEOUT_MS
  const waiting = new Map<string, Waiting>()
  let local: LocalCti | undefined

  const settle = (id: string, frame: (w: Waiting) => string): void => {
    const w = waiting.get(id)
    if (w === undefined) return
    waiting.delete(id)
    clearTimeout(w.timer)
    w.resolve(frame(w))
  }

  return {
    bind(l) {
      local = l
    },
    async send(node, source, frame, unreachable) {
      if (!conn.isReady()) return unreachable(`Redis is unreachable: the command was not sent to node ${node}, which owns the channel`)
      const id = randomUUID()
      const reply = new Promise<string>((resolve) => {
        const timer = setTimeout(
          () => settle(id, (w) => w.unreachable(`node ${node}, which owns the channel, did not answer within ${timeoutMs} ms: the command may have been carried out there`)),
          timeoutMs,
        )
        waiting.set(id, { resolve, unreachable, timer })
      })
      try {
        const receivers = await conn.redis.publish(keys.ctiCommands(node), commandMessage({ from: nodeId, id, source, frame }))
        if (receivers === 0) {
          settle(id, (w) => w.unreachable(`node ${node}, which owns the channel, does not listen for commands (stopping, or cut off from Redis): nothing was done`))
        }
      } catch (e) {
        settle(id, (w) => w.unreachable(`the command could not be sent to node ${node} (${(e as Error).message}): nothing was done`))
      }
      return reply
    },
    onCommand(text) {
      const m = parseCommandMessage(text)
      if (m === undefined) return void logger.warn('cti: a malformed forwarded command was dropped')
      if (local === undefined) return // CTI not attached yet: the asking node times out
      local
        .command(m.source, m.frame)
        .then((frame) => conn.redis.publish(keys.ctiReplies(m.from), replyMessage({ id: m.id, frame })))
        .catch((e: unknown) => logger.warn({ err: (e as Error).message, from: m.from }, 'cti: the answer to a forwarded command could not be sent'))
    },
    onReply(text) {
      const m = parseReplyMessage(text)
      if (m !== undefined) settle(m.id, () => m.frame)
    },
    close() {
      for (const id of [...waiting.keys()]) settle(id, (w) => w.unreachable('this node is stopping: the command may have been carried out by the node that owns the channel'))
    },
  }
}
