/**
 * The FreeSWITCH simulator: an inbound event socket on TCP that behaves as FreeSWITCH 1.10.12
 * does for the daemon (captures in /work/shared/freeswitch), a simulated sofia profile with the
 * configured terminals registered, simulated PSTN gateways, and mod_xml_curl requests to the
 * daemon for the dialplan and user lookups. See docs/simulator.md.
 */
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { DomainConfig, SimBehaviour } from '../config/schema.js'
import { silentLogger, type Logger } from '../util/logger.js'
import { syncApi } from './api.js'
import { SwitchCore, type ExecutedApp } from './core.js'
import { EslServer } from './esl-server.js'
import { Registry } from './registry.js'
import { Session } from './session.js'

export interface SimulatorOptions {
  /** Users' `sim.terminals` and the domain's `sim.pstn` say how they behave. */
  readonly domains: readonly DomainConfig[]
  /** ESL password. */
  readonly password: string
  /** SIP profile name in channel names and contacts (default `internal`). */
  readonly sipProfile?: string
  /** The daemon's mod_xml_curl endpoint (Basic auth), e.g. http://127.0.0.1:8080/freeswitch/xml_curl */
  readonly xmlCurl?: { readonly url: string; readonly username: string; readonly password: string }
  readonly logger?: Logger
  /** Multiplies every simulated delay (tests use e.g. 0.05); default 1. */
  readonly timeScale?: number
}

export interface SimChannelView {
  readonly uuid: string
  readonly name: string
  readonly direction: 'inbound' | 'outbound'
  /** Channel-State (CS_EXECUTE, CS_CONSUME_MEDIA...). */
  readonly state: string
  readonly callState: string
  readonly answered: boolean
  readonly destination: string
  readonly context: string
  readonly variables: Readonly<Record<string, string>>
  /** The bridged (or originating) other leg. */
  readonly otherLeg?: string
  readonly bridgedTo?: string
  readonly hangupCause?: string
  readonly application?: string
}

export class Simulator {
  private readonly core: SwitchCore
  private readonly esl: EslServer
  private readonly log: Array<{ at: number; text: string }> = []

  constructor(opts: SimulatorOptions) {
    const logger = opts.logger ?? silentLogger()
    const profile = opts.sipProfile ?? 'internal'
    const registry = new Registry(profile, opts.domains)
    this.core = new SwitchCore({
      profile,
      timeScale: opts.timeScale ?? 1,
      logger,
      registry,
      identity: { coreUuid: randomUUID(), hostname: os.hostname(), ipv4: '127.0.0.1', ipv6: '::1' },
      ...(opts.xmlCurl !== undefined ? { xmlCurl: opts.xmlCurl } : {}),
    })
    this.core.syncApi = (cmd, arg) => syncApi(this.core, cmd, arg)?.text ?? ''
    this.esl = new EslServer({
      core: this.core,
      password: opts.password,
      logger,
      onCommand: (text) => this.log.push({ at: Date.now(), text }),
    })
  }

  /** Resolves the bound port (0 = an ephemeral one). */
  listen(port: number, host = '127.0.0.1'): Promise<number> {
    return this.esl.listen(port, host)
  }

  /** Hangs up everything, closes sockets and timers. */
  async close(): Promise<void> {
    await this.core.close()
    await this.esl.close()
  }

  /** Config reload: terminals and PSTN behaviours follow the new domains. */
  setDomains(domains: readonly DomainConfig[]): void {
    this.core.registry.setDomains(domains)
  }

  /** Every command line received on any ESL socket, verbatim. */
  get commands(): ReadonlyArray<{ at: number; text: string }> {
    return this.log
  }

  /** The Core-UUID of this simulated switch (changes with each Simulator, like a FreeSWITCH restart). */
  get coreUuid(): string {
    return this.core.bus.identity.coreUuid
  }

  liveChannels(): ReadonlyArray<SimChannelView> {
    return [...this.core.sessions.values()].filter((s) => !s.destroyed).map(view)
  }

  /** Every application run (dialplan, originate `&app`, sendmsg), optionally for one channel. */
  executedApps(uuid?: string): ReadonlyArray<ExecutedApp> {
    return uuid === undefined ? [...this.core.executed] : this.core.executed.filter((e) => e.uuid === uuid)
  }

  /** Destroys the ESL sockets abruptly (fault tests); calls stay up. */
  dropConnections(): void {
    this.esl.dropConnections()
  }

  setTerminalBehaviour(domain: string, userName: string, index: number, b: SimBehaviour): void {
    this.core.registry.setTerminalBehaviour(domain, userName, index, b)
  }

  setPstnBehaviour(domain: string, number: string, b: SimBehaviour): void {
    this.core.registry.setPstnBehaviour(domain, number, b)
  }

  /** The far end hangs up (a BYE when answered: recv_bye, sip_term_status 200, capture 25). */
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
  placeInboundCall(o: { domain: string; fromUser: string; destination: string }): Promise<string> {
    const core = this.core
    const user = core.registry.user(o.domain, o.fromUser)
    const domain = core.registry.domain(o.domain)
    if (user === undefined || domain === undefined) return Promise.reject(new Error(`sim: no user ${o.fromUser}@${o.domain}`))
    const terminal = core.registry.terminals(domain.name, user).find((t) => t.behaviour.behaviour !== 'unregistered')
    const port = terminal?.port ?? 5060
    const uuid = core.newUuid()
    const name = `sofia/${core.profile}/${user.name}@${domain.name}`
    const s = new Session({
      uuid,
      name,
      direction: 'inbound',
      profile: {
        direction: 'inbound',
        logicalDirection: 'inbound',
        username: user.name,
        dialplan: 'XML',
        callerIdName: user.label ?? user.name,
        callerIdNumber: user.name,
        origCallerIdName: user.label ?? user.name,
        origCallerIdNumber: user.name,
        networkAddr: '127.0.0.1',
        ani: user.name,
        destinationNumber: o.destination,
        source: 'mod_sofia',
        context: domain.name,
      },
    })
    s.hitDialplan = true
    s.presenceId = `${user.name}@${domain.name}`
    const vars: Array<[string, string]> = [
      ['direction', 'inbound'],
      ['uuid', uuid],
      ['session_id', String(core.sessionsSinceStartup + 1)],
      ['sip_from_user', user.name],
      ['sip_from_uri', `${user.name}@${domain.name}`],
      ['sip_from_host', domain.name],
      ['channel_name', name],
      ['sip_call_id', `${randomUUID()}@127.0.0.1`],
      ['sip_local_network_addr', '127.0.0.1'],
      ['sip_network_ip', '127.0.0.1'],
      ['sip_network_port', String(port)],
      ['sip_received_ip', '127.0.0.1'],
      ['sip_received_port', String(port)],
      ['sip_via_protocol', 'udp'],
      ['sip_authorized', 'true'],
      ['sip_number_alias', user.extension ?? user.name],
      ['sip_auth_username', user.name],
      ['sip_auth_realm', domain.name],
      ['number_alias', user.extension ?? user.name],
      ['requested_user_name', user.name],
      ['requested_domain_name', domain.name],
      ['user_context', domain.name],
      ['effective_caller_id_name', user.label ?? user.name],
      ['effective_caller_id_number', user.extension ?? user.name],
      ['user_name', user.name],
      ['domain_name', domain.name],
      ['sofia_profile_name', core.profile],
      ['sip_req_user', o.destination],
      ['sip_req_uri', `${o.destination}@${domain.name}`],
      ['sip_req_host', domain.name],
      ['sip_to_user', o.destination],
      ['sip_to_uri', `${o.destination}@${domain.name}`],
      ['sip_to_host', domain.name],
      ['sip_contact_user', user.name],
      ['sip_contact_port', String(port)],
      ['sip_contact_uri', `${user.name}@127.0.0.1:${port}`],
      ['sip_contact_host', '127.0.0.1'],
      ['presence_id', `${user.name}@${domain.name}`],
      ['call_uuid', uuid],
    ]
    for (const [k, v] of vars) s.setVar(k, v)
    core.add(s)
    s.callState = 'RINGING'
    core.requestStep(s, { kind: 'route' })
    return Promise.resolve(uuid)
  }

  /** DTMF from the far end: DTMF events, and digits for play_and_get_digits. */
  sendDtmf(uuid: string, digits: string): void {
    const s = this.core.sessions.get(uuid)
    if (s !== undefined) this.core.receiveDtmf(s, digits)
  }
}

function view(s: Session): SimChannelView {
  const bridged = s.bridge === undefined ? undefined : s.bridge.a === s ? s.bridge.b.uuid : s.bridge.a.uuid
  return {
    uuid: s.uuid,
    name: s.name,
    direction: s.direction,
    state: s.runningState,
    callState: s.callState,
    answered: s.answered,
    destination: s.profile.destinationNumber,
    context: s.profile.context,
    variables: Object.fromEntries(s.vars),
    ...(s.other !== undefined ? { otherLeg: s.other.uuid } : {}),
    ...(bridged !== undefined ? { bridgedTo: bridged } : {}),
    ...(s.hangupCause !== undefined ? { hangupCause: s.hangupCause } : {}),
    ...(s.currentApp !== undefined ? { application: s.currentApp.name } : {}),
  }
}
