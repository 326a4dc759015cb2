/**
 * The switch's bookkeeping that every other part of the core reads: the live sessions and the
 * counters `status` shows, the global variables, the event bus with the one way channel events
 * are fired, and `${...}` expansion. It calls nothing else in the core.
 */
import { randomUUID } from 'node:crypto'
import { EventBus, type Headers, type SwitchIdentity } from '../model/events.js'
import type { Session } from '../model/session.js'
import { expandVariables } from '../text/expand.js'

export class ChannelTable {
  readonly bus: EventBus
  /** Live sessions, until CHANNEL_DESTROY. */
  readonly sessions = new Map<string, Session>()
  readonly startedAt = Date.now()
  readonly globals = new Map<string, string>()
  sessionsSinceStartup = 0
  peakSessions = 0

  constructor(
    identity: SwitchIdentity,
    /** The first configured domain: the `domain` global (else the switch's IPv4 address). */
    firstDomain: string | undefined,
    /** Synchronous API commands usable from `${api(args)}`. */
    private readonly api: (command: string, arg: string) => string,
  ) {
    this.bus = new EventBus(identity)
    // A few of FreeSWITCH's global variables (global_getvar, `$${...}`).
    this.globals.set('hostname', identity.hostname)
    this.globals.set('local_ip_v4', identity.ipv4)
    this.globals.set('local_ip_v6', identity.ipv6)
    this.globals.set('domain', firstDomain ?? identity.ipv4)
    this.globals.set('default_password', '1234')
    this.globals.set('switch_serial', identity.coreUuid.slice(0, 8))
  }

  /** Fires a channel event: core headers, `pre` headers, the channel data, then `post` headers. */
  fireChannel(name: string, s: Session, post: Headers = [], pre: Headers = []): void {
    this.bus.fire(name, [...pre, ...s.eventData(name !== 'CHANNEL_HANGUP_COMPLETE'), ...post])
  }

  /**
   * The API hooks of a channel (switch_channel.c do_api_on for `api_on_*`,
   * switch_core_state_machine.c api_hook for `api_hangup_hook`): the command up to the first
   * space, its argument expanded with the channel's variables, the output dropped.
   */
  runApiHook(s: Session, text: string): void {
    const sp = text.indexOf(' ')
    const cmd = sp < 0 ? text : text.slice(0, sp)
    const arg = sp < 0 ? '' : this.expand(s, text.slice(sp + 1))
    this.api(cmd, arg)
  }

  /** switch_channel_expand_variables on a session's variables (and caller profile fields). */
  expand(s: Session | undefined, text: string): string {
    return this.expandLookup((n) => s?.getVar(n) ?? profileField(s, n), text)
  }

  expandLookup(variable: (name: string) => string | undefined, text: string): string {
    return expandVariables(text, {
      variable,
      global: (n) => this.globals.get(n),
      api: (cmd, arg) => this.api(cmd, arg),
    })
  }

  /**
   * Registers a new session and fires CHANNEL_CREATE (CS_INIT,
   * test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt).
   */
  add(s: Session): void {
    this.sessions.set(s.uuid, s)
    this.sessionsSinceStartup++
    this.peakSessions = Math.max(this.peakSessions, this.sessions.size)
    s.setVar('session_id', String(this.sessionsSinceStartup))
    s.setState('CS_INIT', 2)
    this.fireChannel('CHANNEL_CREATE', s)
    // Outbound legs wait in CS_CONSUME_MEDIA while they ring
    // (test/fixtures/freeswitch/esl/10-no-answer.txt and 11-busy-486.txt: HANGUP shows it).
    if (s.direction === 'outbound') s.setState('CS_CONSUME_MEDIA', 7)
  }

  newUuid(): string {
    return randomUUID()
  }
}

/** Caller profile fields that `${...}` can read when no channel variable has the name. */
function profileField(s: Session | undefined, name: string): string | undefined {
  if (s === undefined) return undefined
  const p = s.profile
  switch (name) {
    case 'destination_number':
      return p.destinationNumber
    case 'caller_id_name':
      return p.callerIdName
    case 'caller_id_number':
      return p.callerIdNumber
    case 'ani':
      return p.ani
    case 'context':
      return p.context
    case 'rdnis':
      return p.rdnis
    case 'uuid':
      return s.uuid
    case 'channel_name':
      return s.name
    case 'dialplan':
      return p.dialplan
    case 'username':
      return p.username
    default:
      return undefined
  }
}
