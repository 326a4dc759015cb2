/**
 * The FreeSWITCH simulator: an inbound event socket on TCP that behaves as FreeSWITCH 1.10.12
 * does for the daemon (captures in test/fixtures/freeswitch), a simulated sofia profile with the
 * configured terminals registered, simulated PSTN gateways, and mod_xml_curl requests to the
 * daemon for the dialplan and user lookups. See docs/simulator.md.
 *
 * This is the composition root: it builds the switch core and registers into it what the core
 * runs without knowing (the applications, the dialplan hunter, the API for `${api()}`), then
 * puts the ESL server in front. Below it the folders import one way only:
 *
 *   esl → api → calls → core → xml → model, text
 *         apps → calls      dialplan → core
 *
 * (text: FreeSWITCH's string grammars; model: channels, sessions, events, time, registrations;
 * xml: the mod_xml_curl client and document reader; core: the switch itself; calls: originate,
 * endpoints, directory, inbound calls; apps: the dialplan applications; api: API commands.)
 */
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { DomainConfig, SimBehaviour } from '../config/schema.js'
import { silentLogger, type Logger } from '../util/logger.js'
import { syncApi } from './api/sync.js'
import { APPS } from './apps/table.js'
import { placeInboundCall, type InboundCall } from './calls/inbound.js'
import { announceRegistrations, fireRegistrationChanges } from './calls/registrations.js'
import { channelView, type SimChannelView } from './channel-view.js'
import { SwitchCore } from './core/switch-core.js'
import type { ExecutedApp } from './core/switch.js'
import { huntDialplan } from './dialplan/hunt.js'
import { EslServer } from './esl/server.js'
import { Registry } from './model/registry.js'
import { BoundedLog } from './core/bounded-log.js'

export interface SimulatorOptions {
  /** Users' `sim.terminals` and the domain's `sim.pstn` say how they behave. */
  readonly domains: readonly DomainConfig[]
  /** ESL password. */
  readonly password: string
  /** SIP profile name in channel names and contacts (default `internal`). */
  readonly sipProfile?: string
  /** The daemon's mod_xml_curl endpoint on its xml_curl listener (Basic auth), e.g. http://127.0.0.1:8081/freeswitch/xml_curl */
  readonly xmlCurl?: { readonly url: string; readonly username: string; readonly password: string }
  readonly logger?: Logger
  /** Multiplies every simulated delay (tests use e.g. 0.05); default 1. */
  readonly timeScale?: number
  /** switch.conf.xml's `sessions-per-second` (default 30, vanilla's); `fsctl sps N` changes it at run time. */
  readonly sessionsPerSecond?: number
}

export class Simulator {
  private readonly core: SwitchCore
  private readonly esl: EslServer
  /** The latest command lines (bounded-log.ts: a long-running sandbox must not grow with every call). */
  private readonly log = new BoundedLog<{ at: number; text: string }>()
  /** Once shutting down (close(), or `fsctl shutdown`): the one shutdown in progress. */
  private closing: Promise<void> | undefined
  /** Resolved when a shutdown, whoever asked for it, has finished: the standalone process then exits (src/sim/run.ts). */
  private markShutDown: () => void = () => undefined
  private readonly finished = new Promise<void>((resolve) => (this.markShutDown = resolve))

  constructor(opts: SimulatorOptions) {
    const logger = opts.logger ?? silentLogger()
    const profile = opts.sipProfile ?? 'internal'
    const registry = new Registry(profile, opts.domains)
    this.core = new SwitchCore({
      profile,
      timeScale: opts.timeScale ?? 1,
      ...(opts.sessionsPerSecond !== undefined ? { sessionsPerSecond: opts.sessionsPerSecond } : {}),
      logger,
      registry,
      identity: { coreUuid: randomUUID(), hostname: os.hostname(), ipv4: '127.0.0.1', ipv6: '::1' },
      ...(opts.xmlCurl !== undefined ? { xmlCurl: opts.xmlCurl } : {}),
      // What the core runs, registered here: it imports none of them.
      apps: APPS,
      dialplan: huntDialplan,
      api: (sw, cmd, arg) => syncApi(sw, cmd, arg)?.text ?? '',
      shutdown: () => void this.close(),
    })
    // The configured phones register as the profile starts (nobody listens yet, as on a real start).
    announceRegistrations(this.core)
    this.esl = new EslServer({
      sw: this.core,
      password: opts.password,
      logger,
      onCommand: (text) => this.log.push({ at: Date.now(), text }),
    })
  }

  /** Resolves the bound port (0 = an ephemeral one). */
  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return this.esl.listen(port, host)
  }

  /**
   * Shuts down as FreeSWITCH does (test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt): the
   * SHUTDOWN event first, then every channel hung up (SYSTEM_SHUTDOWN), then the shutdown
   * notice on every event socket and the close; timers stop.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.core.bus.fire('SHUTDOWN', [['Event-Info', 'System Shutting Down']])
      await this.core.close()
      this.esl.shutDownConnections()
      await this.esl.close()
      this.markShutDown()
    })()
    return this.closing
  }

  /** Resolves once the switch has shut down: close(), or `fsctl shutdown` over the event socket. */
  get shutDown(): Promise<void> {
    return this.finished
  }

  /** Config reload: terminals and PSTN behaviours follow the new domains (registrations that changed fire sofia events). */
  setDomains(domains: readonly DomainConfig[]): void {
    const before = this.core.registry.registered()
    this.core.registry.setDomains(domains)
    fireRegistrationChanges(this.core, before)
  }

  /** Every command line received on any ESL socket, verbatim: the latest DEFAULT_HISTORY of them. */
  get commands(): ReadonlyArray<{ at: number; text: string }> {
    return this.log.entries()
  }

  /** The Core-UUID of this simulated switch (changes with each Simulator, like a FreeSWITCH restart). */
  get coreUuid(): string {
    return this.core.bus.identity.coreUuid
  }

  liveChannels(): ReadonlyArray<SimChannelView> {
    return [...this.core.sessions.values()].filter((s) => !s.destroyed).map(channelView)
  }

  /** Every application run (dialplan, originate `&app`, sendmsg), optionally for one channel. */
  executedApps(uuid?: string): ReadonlyArray<ExecutedApp> {
    return uuid === undefined ? [...this.core.executed] : this.core.executed.filter((e) => e.uuid === uuid)
  }

  /** Destroys the ESL sockets abruptly (fault tests); calls stay up. */
  dropConnections(): void {
    this.esl.dropConnections()
  }

  /** A terminal's behaviour; `unregistered` (or from it) is the phone unregistering (registering): sofia::unregister (register). */
  setTerminalBehaviour(domain: string, userName: string, index: number, b: SimBehaviour): void {
    const before = this.core.registry.registered()
    this.core.registry.setTerminalBehaviour(domain, userName, index, b)
    fireRegistrationChanges(this.core, before)
  }

  setPstnBehaviour(domain: string, number: string, b: SimBehaviour): void {
    this.core.registry.setPstnBehaviour(domain, number, b)
  }

  /**
   * The far end hangs up (a BYE when answered: recv_bye, sip_term_status 200,
   * test/fixtures/freeswitch/esl/25-remote-bye-parked-leg.txt).
   */
  remoteHangup(uuid: string, cause = 'NORMAL_CLEARING'): boolean {
    const s = this.core.sessions.get(uuid)
    if (s === undefined || !s.up) return false
    this.core.remoteBye(s, cause)
    return true
  }

  /**
   * A registered phone of `fromUser` dials `destination`: a new inbound channel that runs the
   * XML dialplan in the caller's user_context (the domain name) through mod_xml_curl.
   * Resolves the channel's uuid once CHANNEL_CREATE has fired.
   */
  placeInboundCall(o: InboundCall): Promise<string> {
    const placed = placeInboundCall(this.core, o)
    return placed.ok ? Promise.resolve(placed.value) : Promise.reject(new Error(placed.error))
  }

  /** DTMF from the far end: DTMF events, and digits for play_and_get_digits. */
  sendDtmf(uuid: string, digits: string): void {
    const s = this.core.sessions.get(uuid)
    if (s !== undefined) this.core.receiveDtmf(s, digits)
  }
}
