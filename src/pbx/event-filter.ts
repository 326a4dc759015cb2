/**
 * Which events FreeSWITCH sends the daemon, and the ESL `filter` commands that say so.
 *
 * `event json <names>` chooses event types; the connection subscribes to
 * CHANNEL_EXECUTE_COMPLETE and CUSTOM too (as esl-lite did on its own). CHANNEL_EXECUTE_COMPLETE is the largest part of what a
 * call sends (one per dialplan application, each carrying every channel variable: a third of
 * the events in test/fixtures/freeswitch/esl/09-originate-user-form-all-events.txt), and the
 * daemon needs only the ones that complete its own `execute` (the IVR runner). So the link also
 * sets filters, which mod_event_socket.c (event_handler) applies after the subscription: once a
 * listener has any filter, an event it subscribed to is sent only if one positive filter matches
 * it (a header of that name with that value, compared with strcasecmp), and several filters on
 * the same header add up (`filter` appends a header to the listener's filter list,
 * SWITCH_STACK_BOTTOM). The simulator applies the same rule (src/sim/esl/subscription.ts).
 *
 * The filters: one `Event-Name <name>` per event the daemon follows, and
 * `Application-UUID-Name <EXECUTE_NAME>`, the name our `sendmsg execute` gives its
 * application (`event-uuid-name`, which switch_core_session_exec copies into the
 * CHANNEL_EXECUTE_COMPLETE as Application-UUID-Name).
 *
 * A half-applied filter list would drop events the daemon needs (a filter list only lets
 * through what it names). So the first filter lets everything through (a regular expression
 * on Event-Name, which every event has), the exact filters follow, and the catch-all is deleted
 * only once all of them were accepted: at every instant FreeSWITCH sends at least what the
 * daemon needs. Should one be refused, the catch-all stays (more bytes, nothing lost).
 */

/**
 * The event types the daemon's listeners receive (channel model, engine, CTI, IVR, job results),
 * each let through by name. The connection subscribes to them (pbx/connection.ts SUBSCRIBED_EVENTS),
 * plus CHANNEL_EXECUTE_COMPLETE, let through only for our own executes.
 */
export const DELIVERED_EVENTS = [
  'CHANNEL_CREATE',
  'CHANNEL_PROGRESS',
  'CHANNEL_PROGRESS_MEDIA',
  'CHANNEL_ANSWER',
  'CHANNEL_BRIDGE',
  'CHANNEL_UNBRIDGE',
  'CHANNEL_PARK',
  'CHANNEL_HANGUP',
  'CHANNEL_DESTROY',
  'BACKGROUND_JOB',
  'DTMF',
  // A recording's start and end (src/recording/follow.ts; test/fixtures/freeswitch/esl/28).
  'RECORD_START',
  'RECORD_STOP',
] as const

/**
 * The event types let through by name: those, and SHUTDOWN, which the link itself judges.
 * @internal Exported for tests: test/pbx checks the filters against it.
 */
export const FOLLOWED_EVENTS = [...DELIVERED_EVENTS, 'SHUTDOWN'] as const

/** The `event-uuid-name` of the daemon's own `sendmsg execute`: its completions pass the filter. */
export const EXECUTE_NAME = 'cod-execute'

/**
 * Lets every event through while the exact filters are being added.
 * @internal Exported for tests: test/pbx checks the filter commands.
 */
export const CATCH_ALL_FILTER = 'filter Event-Name /./'
/** @internal Exported for tests: test/pbx checks the filter commands. */
export const CATCH_ALL_DELETE = 'filter delete Event-Name /./'

/**
 * The exact filters, in the order they are sent.
 * @internal Exported for tests: test/pbx and bench/ set the same filters.
 */
export const EXACT_FILTERS: readonly string[] = [...FOLLOWED_EVENTS.map((name) => `filter Event-Name ${name}`), `filter Application-UUID-Name ${EXECUTE_NAME}`]

/** How one command of the sequence ended: FreeSWITCH's reply text, or undefined when it was not answered. */
export type SendFilter = (command: string) => Promise<string | undefined>

export type FilterOutcome =
  /** Only the followed events (and our executes' completions) are sent. */
  | { readonly kind: 'filtered' }
  /** Everything subscribed is still sent (a filter was refused or not answered). */
  | { readonly kind: 'unfiltered'; readonly refused: string; readonly reply: string | undefined }

const accepted = (reply: string | undefined): boolean => reply !== undefined && reply.startsWith('+OK')

/**
 * The filter that lets a CUSTOM subclass through, for a part that asked for it
 * (`PbxConnection.onCustomEvent`; a single daemon asks for none, so it receives no more than the
 * list above: e.g. a cluster node's sofia registration events, docs/cluster.md).
 */
export const subclassFilter = (subclass: string): string => `filter Event-Subclass ${subclass}`

/**
 * Runs the sequence on one socket. `send` queues one command and resolves with its reply; the
 * commands go one after another, each after the previous one's reply. `extra`: the filters of
 * the CUSTOM subclasses asked for, added with the exact ones.
 */
export async function applyEventFilters(send: SendFilter, extra: readonly string[] = []): Promise<FilterOutcome> {
  const first = await send(CATCH_ALL_FILTER)
  if (!accepted(first)) return { kind: 'unfiltered', refused: CATCH_ALL_FILTER, reply: first }
  const exact = [...EXACT_FILTERS, ...extra]
  const replies = await Promise.all(exact.map((f) => send(f)))
  const bad = replies.findIndex((r) => !accepted(r))
  if (bad >= 0) return { kind: 'unfiltered', refused: exact[bad] as string, reply: replies[bad] }
  const last = await send(CATCH_ALL_DELETE)
  if (!accepted(last)) return { kind: 'unfiltered', refused: CATCH_ALL_DELETE, reply: last }
  return { kind: 'filtered' }
}
