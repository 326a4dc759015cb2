/**
 * The sofia profile's registration events and listing, for the simulated terminals: a terminal
 * that becomes registered (the simulator's start, a config reload, `setTerminalBehaviour`) fires
 * `sofia::register`, one that stops being registered fires `sofia::unregister`, with the header
 * names and order FreeSWITCH 1.10.12 uses (test/fixtures/freeswitch/esl/27-sofia-register-events.txt:
 * sofia_reg.c sofia_reg_handle_register_token). `show registrations` lists one row per user, as
 * the core's registration table does there.
 *
 * What differs from the real switch: the simulated registrations never expire (no
 * `sofia::expire`; a terminal is registered until its behaviour says `unregistered`), and the
 * events stop at the sofia headers: FreeSWITCH appends the directory user's params and variables
 * (`sip_number_alias`, `user_context`, `cod_*`...), which the simulator would have to fetch.
 */
import type { Switch } from '../core/switch.js'
import type { Headers } from '../model/events.js'
import { TERMINAL_HOST, type Terminal } from '../model/registry.js'

/** What a simulated phone asks for (the lane's phones ask 600; FreeSWITCH keeps what is asked). */
const SIM_REGISTER_EXPIRES = 3600

const SOFIA_REGISTER = 'sofia::register'
const SOFIA_UNREGISTER = 'sofia::unregister'

/** Event-Calling-* of the two events (the capture's line numbers). */
const REGISTER_CALLING = ['sofia_reg.c', 'sofia_reg_handle_register_token', '2059'] as const
const UNREGISTER_CALLING = ['sofia_reg.c', 'sofia_reg_handle_register_token', '2213'] as const

/** One Call-ID per terminal for the simulator's life: a phone keeps its Call-ID across re-registrations. */
const callIdOf = (t: Terminal): string => `sim-${t.port}@${TERMINAL_HOST}`
const contactOf = (t: Terminal): string => `"" <sip:${t.user.name}@${TERMINAL_HOST}:${t.port}>`

function registerHeaders(sw: Switch, t: Terminal): Headers {
  return [
    ['profile-name', sw.profile],
    ['from-user', t.user.name],
    ['from-host', t.domain],
    ['presence-hosts', 'n/a'],
    ['contact', contactOf(t)],
    ['call-id', callIdOf(t)],
    ['rpid', 'unknown'],
    ['status', 'Registered(UDP)'],
    ['expires', String(SIM_REGISTER_EXPIRES)],
    ['to-user', t.user.name],
    ['to-host', t.domain],
    ['network-ip', TERMINAL_HOST],
    ['network-port', String(t.port)],
    ['username', t.user.name],
    ['realm', t.domain],
    ['user-agent', 'cod-simulator'],
  ]
}

function unregisterHeaders(sw: Switch, t: Terminal): Headers {
  return [
    ['profile-name', sw.profile],
    ['username', t.user.name],
    ['from-user', t.user.name],
    ['from-host', t.domain],
    ['contact', contactOf(t)],
    ['call-id', callIdOf(t)],
    ['rpid', 'unknown'],
    ['realm', t.domain],
    ['network-ip', TERMINAL_HOST],
    ['network-port', String(t.port)],
    ['user-agent', 'cod-simulator'],
    ['expires', '0'],
  ]
}

/** Fires `sofia::register` for every registered terminal (the simulator's start: its phones register). */
export function announceRegistrations(sw: Switch): void {
  for (const t of sw.registry.registered().values()) sw.bus.fireCustom(SOFIA_REGISTER, REGISTER_CALLING, registerHeaders(sw, t))
}

/**
 * After the registry changed (`before` is what was registered): `sofia::unregister` for each
 * terminal gone, `sofia::register` for each new one (a terminal whose user changed is both).
 */
export function fireRegistrationChanges(sw: Switch, before: ReadonlyMap<number, Terminal>): void {
  const after = sw.registry.registered()
  const same = (a: Terminal, b: Terminal) => a.domain.toLowerCase() === b.domain.toLowerCase() && a.user.id === b.user.id && a.user.name === b.user.name
  for (const [port, t] of before) {
    const now = after.get(port)
    if (now === undefined || !same(t, now)) sw.bus.fireCustom(SOFIA_UNREGISTER, UNREGISTER_CALLING, unregisterHeaders(sw, t))
  }
  for (const [port, t] of after) {
    const was = before.get(port)
    if (was === undefined || !same(was, t)) sw.bus.fireCustom(SOFIA_REGISTER, REGISTER_CALLING, registerHeaders(sw, t))
  }
}

/**
 * `show registrations` rows: one per user (the core's table keeps one row per user and realm,
 * test/fixtures/freeswitch/esl/27-sofia-register-events.txt), its first registered terminal;
 * `expires` an epoch in seconds, as if the phone had just re-registered.
 */
export function registrationRows(sw: Switch): Array<Record<string, string>> {
  const rows = new Map<string, Record<string, string>>()
  const expires = String(Math.floor(Date.now() / 1000) + SIM_REGISTER_EXPIRES)
  for (const t of [...sw.registry.registered().values()].sort((a, b) => a.port - b.port)) {
    const key = `${t.domain.toLowerCase()}/${t.user.id}`
    if (rows.has(key)) continue
    rows.set(key, {
      reg_user: t.user.name,
      realm: t.domain,
      token: callIdOf(t),
      url: `sofia/${sw.profile}/sip:${t.user.name}@${TERMINAL_HOST}:${t.port}`,
      expires,
      network_ip: TERMINAL_HOST,
      network_port: String(t.port),
      network_proto: 'udp',
      hostname: sw.bus.identity.hostname,
      metadata: '',
    })
  }
  return [...rows.values()]
}

export const REGISTRATION_COLUMNS = ['reg_user', 'realm', 'token', 'url', 'expires', 'network_ip', 'network_port', 'network_proto', 'hostname', 'metadata'] as const
