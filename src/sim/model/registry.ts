/**
 * The simulated SIP side: which terminals are registered (one contact per terminal whose
 * behaviour is not `unregistered`), what each terminal and each PSTN number does when called,
 * and which gateways exist. Built from the domains' `sim.terminals` and `sim.pstn` blocks.
 *
 * Registrations behave like a sofia profile with multiple-registrations=contact (docs/design.md
 * "Lessons from FreeSWITCH": "The SIP profile needs multiple-registrations=contact"): every
 * terminal is its own contact, `sip:<user name>@127.0.0.1:<port>`, with a port fixed per terminal
 * for the simulator's life.
 */
import type { DomainConfig, SimBehaviour, UserConfig } from '../../config/schema.js'
import type { FarEnd } from './channel.js'

const FIRST_TERMINAL_PORT = 5070
export const TERMINAL_HOST = '127.0.0.1'

export interface Terminal {
  readonly domain: string
  readonly user: UserConfig
  readonly index: number
  readonly port: number
  readonly behaviour: SimBehaviour
}

/** The default PSTN behaviour when neither the number nor `default` is configured. */
const PSTN_DEFAULT: SimBehaviour = { answer_after: 1 }

export function farEndOf(b: SimBehaviour, kind: FarEnd['kind'], label: string): FarEnd {
  const base = { kind, label, ...(b.dtmf !== undefined ? { dtmf: b.dtmf } : {}), ...(b.talk !== undefined ? { talk: b.talk } : {}), ...(b.fax_pages !== undefined ? { faxPages: b.fax_pages } : {}) }
  if (b.answer_after !== undefined) {
    return { ...base, answerAfter: b.answer_after, ...(b.hangup_after !== undefined ? { hangupAfter: b.hangup_after } : {}) }
  }
  switch (b.behaviour) {
    case 'busy':
      return { ...base, refuse: 'busy' }
    case 'reject':
      return { ...base, refuse: 'reject' }
    case 'unregistered':
      // Reached only by dialing a stale contact: nobody answers on that port
      // (test/fixtures/freeswitch/esl/22-misc-replies.txt).
      return { ...base, refuse: 'deadContact' }
    default:
      return base
  }
}

export class Registry {
  private domains = new Map<string, DomainConfig>()
  private readonly ports = new Map<string, number>()
  private nextPort = FIRST_TERMINAL_PORT
  private readonly terminalOverrides = new Map<string, SimBehaviour>()
  private readonly pstnOverrides = new Map<string, SimBehaviour>()
  private byPort = new Map<number, Terminal>()

  constructor(
    readonly profile: string,
    domains: readonly DomainConfig[],
  ) {
    this.setDomains(domains)
  }

  setDomains(domains: readonly DomainConfig[]): void {
    this.domains = new Map(domains.map((d) => [d.name.toLowerCase(), d]))
    this.rebuild()
  }

  private rebuild(): void {
    this.byPort = new Map()
    for (const d of this.domains.values()) {
      for (const user of d.users) {
        const terminals = user.sim?.terminals ?? []
        terminals.forEach((configured, index) => {
          const key = `${d.name.toLowerCase()}/${user.id}/${index}`
          let port = this.ports.get(key)
          if (port === undefined) {
            port = this.nextPort++
            this.ports.set(key, port)
          }
          const behaviour = this.terminalOverrides.get(key) ?? configured
          this.byPort.set(port, { domain: d.name, user, index, port, behaviour })
        })
      }
    }
  }

  domain(name: string): DomainConfig | undefined {
    return this.domains.get(name.toLowerCase())
  }

  allDomains(): DomainConfig[] {
    return [...this.domains.values()]
  }

  /**
   * A user by SIP user name: the name, or the extension as a number-alias (docs/design.md
   * "Configuration contract", SIP accounts).
   */
  user(domain: string, sipUser: string): UserConfig | undefined {
    const d = this.domain(domain)
    if (d === undefined) return undefined
    const lower = sipUser.toLowerCase()
    return d.users.find((u) => u.name.toLowerCase() === lower) ?? d.users.find((u) => u.extension === sipUser)
  }

  /** Throws on an unknown user or terminal: a test that names one has a bug. */
  setTerminalBehaviour(domain: string, userName: string, index: number, b: SimBehaviour): void {
    const user = this.user(domain, userName)
    if (user === undefined) throw new Error(`sim: no user ${userName}@${domain}`)
    if (index < 0 || index >= (user.sim?.terminals.length ?? 0)) throw new Error(`sim: ${userName}@${domain} has no terminal ${index}`)
    this.terminalOverrides.set(`${domain.toLowerCase()}/${user.id}/${index}`, b)
    this.rebuild()
  }

  setPstnBehaviour(domain: string, number: string, b: SimBehaviour): void {
    if (this.domain(domain) === undefined) throw new Error(`sim: no domain ${domain}`)
    this.pstnOverrides.set(`${domain.toLowerCase()}/${number}`, b)
  }

  terminals(domain: string, user: UserConfig): Terminal[] {
    return [...this.byPort.values()].filter((t) => t.domain.toLowerCase() === domain.toLowerCase() && t.user.id === user.id).sort((a, b) => a.index - b.index)
  }

  /** `sip:<user>@127.0.0.1:<port>` of the registered terminals of a user, in terminal order. */
  contacts(domain: string, sipUser: string): string[] {
    const user = this.user(domain, sipUser)
    if (user === undefined) return []
    return this.terminals(domain, user)
      .filter((t) => t.behaviour.behaviour !== 'unregistered')
      .map((t) => `sip:${user.name}@${TERMINAL_HOST}:${t.port}`)
  }

  /** Every registered terminal (behaviour not `unregistered`), by its port: what a profile's registration table holds. */
  registered(): Map<number, Terminal> {
    return new Map([...this.byPort].filter(([, t]) => t.behaviour.behaviour !== 'unregistered'))
  }

  terminalAt(host: string, port: number): Terminal | undefined {
    if (host !== TERMINAL_HOST && host !== 'localhost') return undefined
    return this.byPort.get(port)
  }

  /** The domain whose `gateway` is this gateway name. */
  gatewayDomain(gateway: string): DomainConfig | undefined {
    return [...this.domains.values()].find((d) => d.gateway === gateway)
  }

  /** `sim.pstn[number]`, else `sim.pstn.default`, else answer after 1 s. */
  pstnBehaviour(gateway: string, number: string): SimBehaviour {
    const d = this.gatewayDomain(gateway)
    if (d === undefined) return PSTN_DEFAULT
    const override = this.pstnOverrides.get(`${d.name.toLowerCase()}/${number}`)
    if (override !== undefined) return override
    const pstn = d.sim?.pstn ?? {}
    return pstn[number] ?? pstn['default'] ?? PSTN_DEFAULT
  }
}
