/**
 * Where the events the daemon receives go: its own jobs' and executes' completions, the
 * listeners of channel events, the listeners of CUSTOM subclasses, and FreeSWITCH's shutdown
 * notice. The connection (src/pbx/connection.ts) owns what is pending on the socket; this
 * decides, for one event at a time, who hears of it. Every event arrives here once, from the
 * socket's one reader (`take`, src/pbx/esl-reader.ts).
 */
import type { Logger } from '../util/logger.js'
import { readEventJson } from './event-json.js'
import type { FsEvent } from './types.js'

export type EventListener = (event: FsEvent) => void

/** What the connection does with the events that concern it. */
export interface EventRouterHooks {
  /** Any event proves the link alive. */
  heard(): void
  /** A BACKGROUND_JOB (its Job-UUID may be one of ours). */
  jobDone(jobUuid: string, body: string): void
  /** A CHANNEL_EXECUTE_COMPLETE (its Application-UUID may be one of ours). */
  executeDone(appUuid: string, event: FsEvent): void
  /** FreeSWITCH announced its shutdown (the SHUTDOWN event). */
  shutdown(): void
}

export class EventRouter {
  private readonly listeners = new Set<EventListener>()
  private readonly customListeners = new Map<string, Set<EventListener>>()
  private readonly channelEvents: ReadonlySet<string>

  /** `channelEvents`: the event names delivered to onEvent's listeners (the subscription). */
  constructor(
    channelEvents: readonly string[],
    private readonly hooks: EventRouterHooks,
    private readonly log: Logger,
  ) {
    this.channelEvents = new Set(channelEvents)
  }

  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Adds a listener of a CUSTOM subclass; true when the subclass had none yet (subscribe it). */
  onCustom(subclass: string, listener: EventListener): boolean {
    let set = this.customListeners.get(subclass)
    const first = set === undefined
    if (set === undefined) this.customListeners.set(subclass, (set = new Set()))
    set.add(listener)
    return first
  }

  /**
   * An event's JSON body. Runs inside the socket's read callback: nothing may escape it. A body
   * that is no event (not JSON, no Event-Name) is refused, and the reader drops the socket (with
   * the stream's framing in doubt, a fresh socket and a re-read of the channels are the safe
   * way on). An event name nobody subscribed to is ignored.
   */
  take(body: Buffer): boolean {
    const event = readEventJson(body)
    if (event === undefined) return false
    try {
      this.route(event)
    } catch (e) {
      this.log.error({ err: e, event: event['Event-Name'] }, 'event delivery failed')
    }
    return true
  }

  private route(event: FsEvent): void {
    this.hooks.heard()
    const name = event['Event-Name'] ?? ''
    if (this.channelEvents.has(name)) this.deliver(name, event)
    else if (name === 'CUSTOM') this.deliverCustom(event)
    else if (name === 'SHUTDOWN') this.hooks.shutdown()
  }

  private deliver(name: string, event: FsEvent): void {
    if (name === 'CHANNEL_EXECUTE_COMPLETE') {
      const appUuid = event['Application-UUID']
      if (appUuid !== undefined) this.hooks.executeDone(appUuid, event)
    } else if (name === 'BACKGROUND_JOB') {
      this.hooks.jobDone(event['Job-UUID'] ?? '', event._body ?? '')
    }
    for (const l of [...this.listeners]) {
      try {
        l(event)
      } catch (e) {
        this.log.error({ err: e, event: name }, 'event listener failed')
      }
    }
  }

  private deliverCustom(event: FsEvent): void {
    const subclass = event['Event-Subclass']
    const set = subclass === undefined ? undefined : this.customListeners.get(subclass)
    if (set === undefined) return
    for (const l of [...set]) {
      try {
        l(event)
      } catch (e) {
        this.log.error({ err: e, subclass }, 'custom event listener failed')
      }
    }
  }
}
