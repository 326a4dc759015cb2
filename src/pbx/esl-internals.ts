/**
 * The one place that reaches into esl-lite's private parts (node_modules/esl-lite/esl-lite.mjs,
 * version 3.2.0, pinned in package.json for this reason), and why:
 *
 * - its command queue: esl-lite writes one queued command at a time, when the previous one got
 *   its reply, and reads the item's `buf` at that very moment. An item whose `buf` is a getter
 *   therefore learns when it is written, and can still turn into a harmless command while it
 *   waits. That is how a command the daemon gave up on (and answered an error for) is never
 *   written later, and how a command already written is never written a second time after a
 *   reconnect (esl-lite re-queues unanswered commands on every new socket): see
 *   src/pbx/outgoing.ts. esl-lite's own send() keeps a timed-out command queued and writes it
 *   later, which is exactly what must not happen to an originate.
 * - its sockets: to set TCP keepalive, to see a socket close the moment it closes (esl-lite
 *   only says so when the next socket authenticates), to read `bytesRead`, the cheapest
 *   proof that FreeSWITCH is sending (src/pbx/link-health.ts), and to hand its parser whole
 *   messages only: it loses a message whose headers' blank line TCP splits in two
 *   (src/pbx/esl-framing.ts), and to take the events off its path (src/pbx/esl-reader.ts says how).
 *
 * Every access is checked once at start: should esl-lite change, the daemon refuses to start
 * with a clear message rather than silently losing these guarantees (test/pbx/connection.test.ts).
 */
import type { Socket } from 'node:net'
import type { FreeSwitchClient } from 'esl-lite'
import type { EventTaker } from './esl-framing.js'
import { wholeMessages } from './esl-reader.js'

/** A command/reply as esl-lite hands it to the queue item (headers parsed, body raw). */
export interface EslReply {
  readonly headers: { readonly replyText?: string | undefined }
  /** The output of an `api` command (its api/response handed on as a command/reply, esl-framing.ts). */
  readonly body?: Buffer | undefined
}

/** An item of esl-lite's command queue (src/response.ts in esl-lite: `queue.enqueue({...})`). */
export interface EslQueueItem {
  readonly queued: number
  /** Read once each time esl-lite writes the item (again after a reconnect). */
  readonly buf: Buffer
  /** The command/reply, or an Error when esl-lite gives up on it (ended). */
  resolve(reply: EslReply | Error): void
}

interface QueueView {
  enqueue(item: EslQueueItem): void
}

interface SocketSource {
  connect(): AsyncGenerator<Socket>
}

interface ClientView {
  readonly queue: QueueView
  sendNextCommand(): void
  readonly lite: { readonly sockets: SocketSource }
}

export interface EslInternals {
  /** Queues an item behind whatever esl-lite has queued, and lets esl-lite write it when its turn comes. */
  enqueue(item: EslQueueItem): void
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/**
 * Checks esl-lite's shape and taps its sockets. Must run synchronously after the client is
 * constructed: esl-lite starts connecting on the next tick. `takeEvent` receives the events
 * esl-lite would otherwise parse and emit (src/pbx/esl-framing.ts).
 */
export function tapEslLite(client: FreeSwitchClient, onSocket: (socket: Socket) => void, takeEvent?: EventTaker): EslInternals {
  // esl-lite's fields are private in its types but plain properties at runtime (checked here).
  const view = client as unknown as Record<string, unknown>
  const queue = view['queue']
  const lite = view['lite']
  const sockets = isObject(lite) ? lite['sockets'] : undefined
  if (
    !isObject(queue) ||
    typeof queue['enqueue'] !== 'function' ||
    typeof view['sendNextCommand'] !== 'function' ||
    !isObject(sockets) ||
    typeof sockets['connect'] !== 'function'
  ) {
    throw new Error('esl-lite is not the version this daemon was written for (3.2.0): its command queue or sockets are not where expected')
  }
  const c = client as unknown as ClientView
  const source = c.lite.sockets
  const connect = source.connect.bind(source)
  source.connect = () => {
    const inner = connect()
    return (async function* tapped() {
      for await (const socket of inner) {
        onSocket(socket)
        wholeMessagesOnly(socket, takeEvent)
        yield socket
      }
    })()
  }
  return {
    enqueue(item) {
      c.queue.enqueue(item)
      // esl-lite replaces sendNextCommand once connected: always call the current one.
      c.sendNextCommand()
    },
  }
}

/**
 * esl-lite reads the socket with `for await` (its FreeSwitchParser): that iteration, and only
 * it, now yields whole messages, without the events taken (src/pbx/esl-reader.ts). The socket
 * is otherwise untouched.
 */
function wholeMessagesOnly(socket: Socket, takeEvent: EventTaker | undefined): void {
  Object.defineProperty(socket, Symbol.asyncIterator, {
    configurable: true,
    value: () => wholeMessages(socket, takeEvent),
  })
}
