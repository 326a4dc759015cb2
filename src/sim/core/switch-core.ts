/**
 * The simulated switch core, put together: the channel table, the channel life (ring, answer,
 * hangup and its reporting), the session thread that runs applications, and bridging. Each
 * part is its own module that knows only the parts below it; this class builds them in order,
 * hands the lower ones the few operations of the upper ones they need, and offers the whole as
 * the `Switch` the applications, the API and originate use.
 *
 * The core knows no application, dialplan or API command: the composition root registers them
 * through `CoreOptions` (see simulator.ts).
 */
import { setMaxListeners } from 'node:events'
import type { Logger } from '../../util/logger.js'
import { Clock } from '../model/clock.js'
import type { EventBus, SwitchIdentity } from '../model/events.js'
import type { Registry } from '../model/registry.js'
import type { Bridge, NextStep, Session } from '../model/session.js'
import type { XmlCurlBinding } from '../xml/curl.js'
import { Bridging } from './bridging.js'
import { ChannelTable } from './channel-table.js'
import { ChannelLife } from './lifecycle.js'
import { SessionThread } from './session-thread.js'
import type { ApiHandler, AppTable, BridgeOutcome, DialplanHunter, ExecutedApp, HangupHow, Switch } from './switch.js'
import { SessionRate } from './session-rate.js'

export interface CoreOptions {
  readonly profile: string
  readonly timeScale: number
  /** switch.conf.xml's sessions-per-second (default vanilla's 30). */
  readonly sessionsPerSecond?: number
  readonly logger: Logger
  readonly identity: SwitchIdentity
  readonly registry: Registry
  readonly xmlCurl?: XmlCurlBinding
  /** The dialplan applications the switch knows. */
  readonly apps: AppTable
  /** How CS_ROUTING finds the applications for a session. */
  readonly dialplan: DialplanHunter
  /** Synchronous API commands for `${api(args)}`. */
  readonly api: ApiHandler
  /** `fsctl shutdown`: shuts the whole switch down, sockets included (the simulator's close()). */
  readonly shutdown?: () => void
}

export class SwitchCore implements Switch {
  readonly clock: Clock
  readonly registry: Registry
  readonly logger: Logger
  readonly profile: string
  readonly xmlCurl?: XmlCurlBinding
  /**
   * Aborted by close(). Every in-flight xml_curl fetch and wait listens on it at once, as many
   * as there are busy channels, so the listener-count warning (meant for leaks) does not apply.
   */
  private readonly shutdown = (() => {
    const c = new AbortController()
    setMaxListeners(0, c.signal)
    return c
  })()
  private readonly table: ChannelTable
  private readonly life: ChannelLife
  private readonly thread: SessionThread
  private readonly bridges: Bridging

  private readonly shutdownHook: (() => void) | undefined
  readonly sessionRate: SessionRate

  constructor(opts: CoreOptions) {
    this.shutdownHook = opts.shutdown
    this.clock = new Clock(opts.timeScale)
    // FreeSWITCH's second is a simulated one.
    this.sessionRate = new SessionRate(1000 * opts.timeScale, opts.sessionsPerSecond)
    this.registry = opts.registry
    this.logger = opts.logger
    this.profile = opts.profile
    if (opts.xmlCurl !== undefined) this.xmlCurl = opts.xmlCurl
    this.table = new ChannelTable(opts.identity, opts.registry.allDomains()[0]?.name, (cmd, arg) => opts.api(this, cmd, arg))
    // The parts below call up only through these closures, which run once everything is built.
    this.life = new ChannelLife(
      this.table,
      this.clock,
      (s) => this.bridges.hungUp(s),
      (s, value) => this.thread.executeOn(s, value),
    )
    this.thread = new SessionThread({
      table: this.table,
      life: this.life,
      logger: opts.logger,
      sw: this,
      apps: opts.apps,
      dialplan: opts.dialplan,
      bridges: {
        leave: (s) => this.bridges.leave(s),
        softBridge: (a, bridge) => this.bridges.softBridge(a, bridge),
        exchange: (b, bridge) => this.bridges.exchange(b, bridge),
      },
    })
    this.bridges = new Bridging(this.table, this.life, this.thread)
  }

  // ---------------------------------------------------------------- state

  get bus(): EventBus {
    return this.table.bus
  }

  get closing(): AbortSignal {
    return this.shutdown.signal
  }

  get sessions(): ReadonlyMap<string, Session> {
    return this.table.sessions
  }

  get globals(): ReadonlyMap<string, string> {
    return this.table.globals
  }

  get startedAt(): number {
    return this.table.startedAt
  }

  get sessionsSinceStartup(): number {
    return this.table.sessionsSinceStartup
  }

  get peakSessions(): number {
    return this.table.peakSessions
  }

  /** Every application run (dialplan, originate `&app`, sendmsg): the latest ones, bounded-log.ts. */
  get executed(): readonly ExecutedApp[] {
    return this.thread.executed.entries()
  }

  // ---------------------------------------------------------------- channel table

  newUuid(): string {
    return this.table.newUuid()
  }

  expand(s: Session | undefined, text: string): string {
    return this.table.expand(s, text)
  }

  expandLookup(variable: (name: string) => string | undefined, text: string): string {
    return this.table.expandLookup(variable, text)
  }

  add(s: Session): void {
    this.table.add(s)
  }

  // ---------------------------------------------------------------- channel life

  startFarEnd(s: Session): void {
    this.life.startFarEnd(s)
  }

  progress(s: Session): void {
    this.life.progress(s)
  }

  preAnswer(s: Session): void {
    this.life.preAnswer(s)
  }

  answer(s: Session): void {
    this.life.answer(s)
  }

  /** The far end hangs up (BYE, or CANCEL / 487 before the answer): Simulator.remoteHangup. */
  remoteBye(s: Session, cause?: string): void {
    this.life.remoteBye(s, cause)
  }

  hangup(s: Session, cause: string, how?: HangupHow): void {
    this.life.hangup(s, cause, how)
  }

  receiveDtmf(s: Session, digits: string, source?: 'RTP' | 'APP'): void {
    this.life.receiveDtmf(s, digits, source)
  }

  hold(s: Session, on: boolean): boolean {
    return this.life.hold(s, on)
  }

  // ---------------------------------------------------------------- session thread

  requestStep(s: Session, step: NextStep): void {
    this.thread.requestStep(s, step)
  }

  execApp(s: Session, name: string, arg: string, opts?: { appUuid?: string }): Promise<void> {
    return this.thread.execApp(s, name, arg, opts)
  }

  queueMessage(s: Session, run: () => Promise<void>): void {
    this.thread.queueMessage(s, run)
  }

  park(s: Session, signal: AbortSignal): Promise<void> {
    return this.thread.park(s, signal)
  }

  transfer(s: Session, destination: string, dialplan?: string, context?: string): void {
    this.thread.transfer(s, destination, dialplan, context)
  }

  // ---------------------------------------------------------------- bridging

  linkBridge(a: Session, b: Session, viaApp: boolean): Bridge {
    return this.bridges.link(a, b, viaApp)
  }

  fireBridge(bridge: Bridge, name: 'CHANNEL_BRIDGE' | 'CHANNEL_UNBRIDGE'): void {
    this.bridges.fire(bridge, name)
  }

  afterBridge(a: Session, end: BridgeOutcome, hangupByDefault: boolean): void {
    this.bridges.after(a, end, hangupByDefault)
  }

  uuidBridge(aUuid: string, bUuid: string): boolean {
    return this.bridges.uuidBridge(aUuid, bUuid)
  }

  // ---------------------------------------------------------------- shutdown

  requestShutdown(): void {
    this.shutdownHook?.()
  }

  /** Hangs every channel up (SYSTEM_SHUTDOWN), waits (at most 2 s) for their destruction, stops the timers. */
  async close(): Promise<void> {
    const all = [...this.table.sessions.values()]
    for (const s of all) this.life.hangup(s, 'SYSTEM_SHUTDOWN')
    this.shutdown.abort()
    await Promise.race([Promise.all(all.map((s) => s.destroyedPromise)), new Promise((r) => setTimeout(r, 2000).unref())])
    this.clock.close()
  }
}
