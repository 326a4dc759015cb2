/**
 * The simulated switch core: the channel table, channel life (ring, answer, hangup and its
 * reporting), the session thread that runs applications, bridges and transfers.
 *
 * Event order is what the captures show (README.md "Where a failing job lands", 00-event-sequences):
 * CHANNEL_HANGUP is fired at once; CHANNEL_HANGUP_COMPLETE and CHANNEL_DESTROY follow on later
 * turns of the event loop (setImmediate), so whoever reacts to a hangup synchronously (an
 * originate timing out: BACKGROUND_JOB before HANGUP_COMPLETE, capture 10) or on the "reported"
 * hook between the two (a refused or killed leg: BACKGROUND_JOB after HANGUP_COMPLETE and before
 * DESTROY, captures 11, 24) lands where FreeSWITCH puts it. Everything that must come before a
 * later event runs in promise continuations (microtasks), never on timers.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../util/logger.js'
import { APPS } from './apps.js'
import { causeQ850, SIP_REFUSALS } from './causes.js'
import type { HangupDisposition } from './channel.js'
import { Clock } from './clock.js'
import { huntDialplan } from './dialplan.js'
import { EventBus, localStamp, nowMicros, type Headers, type SwitchIdentity } from './events.js'
import { expandVariables } from './expand.js'
import type { Registry } from './registry.js'
import { Bridge, Session, type NextStep, type QueuedApp } from './session.js'
import type { XmlCurlBinding } from './xmlcurl.js'
import { setMaxListeners } from 'node:events'

/** Delay between INVITE and the far end's 180 or final refusal (captures: ~20 ms). */
export const RESPONSE_DELAY_SEC = 0.02
/** Simulated length of one playback / speak prompt. */
export const PROMPT_SEC = 1

export interface ExecutedApp {
  readonly uuid: string
  readonly app: string
  readonly arg: string
}

export interface HangupHow {
  readonly disposition?: HangupDisposition
  /** The SIP final response that ended the leg (recv_refuse) or 200 for a received BYE. */
  readonly sip?: { readonly status: number; readonly phrase: string }
}

export type ApiHandler = (command: string, arg: string) => string

export interface CoreOptions {
  readonly profile: string
  readonly timeScale: number
  readonly logger: Logger
  readonly identity: SwitchIdentity
  readonly registry: Registry
  readonly xmlCurl?: XmlCurlBinding
}

export class SwitchCore {
  readonly bus: EventBus
  readonly clock: Clock
  readonly registry: Registry
  readonly logger: Logger
  readonly profile: string
  readonly xmlCurl?: XmlCurlBinding
  /** Live sessions, until CHANNEL_DESTROY. */
  readonly sessions = new Map<string, Session>()
  readonly executed: ExecutedApp[] = []
  readonly startedAt = Date.now()
  readonly globals = new Map<string, string>()
  sessionsSinceStartup = 0
  peakSessions = 0
  /** Aborted by close(): ends mod_xml_curl requests still in flight. */
  /**
   * Aborted by close(). Every in-flight xml_curl fetch and wait listens on it at once, as many
   * as there are busy channels, so the listener-count warning (meant for leaks) does not apply.
   */
  readonly shutdown = (() => {
    const c = new AbortController()
    setMaxListeners(0, c.signal)
    return c
  })()
  /** Synchronous API commands usable from `${api(args)}` (set by the API module). */
  syncApi: ApiHandler = () => ''

  constructor(opts: CoreOptions) {
    this.bus = new EventBus(opts.identity)
    this.clock = new Clock(opts.timeScale)
    this.registry = opts.registry
    this.logger = opts.logger
    this.profile = opts.profile
    if (opts.xmlCurl !== undefined) this.xmlCurl = opts.xmlCurl
    const first = opts.registry.allDomains()[0]
    // A few of FreeSWITCH's global variables (global_getvar, `$${...}`).
    this.globals.set('hostname', opts.identity.hostname)
    this.globals.set('local_ip_v4', opts.identity.ipv4)
    this.globals.set('local_ip_v6', opts.identity.ipv6)
    this.globals.set('domain', first?.name ?? opts.identity.ipv4)
    this.globals.set('default_password', '1234')
    this.globals.set('switch_serial', opts.identity.coreUuid.slice(0, 8))
  }

  // ---------------------------------------------------------------- events

  /** Fires a channel event: core headers, `pre` headers, the channel data, then `post` headers. */
  fireChannel(name: string, s: Session, post: Headers = [], pre: Headers = []): void {
    this.bus.fire(name, [...pre, ...s.eventData(name !== 'CHANNEL_HANGUP_COMPLETE'), ...post])
  }

  /** switch_channel_expand_variables on a session's variables (and caller profile fields). */
  expand(s: Session | undefined, text: string): string {
    return this.expandLookup((n) => s?.getVar(n) ?? profileField(s, n), text)
  }

  expandLookup(variable: (name: string) => string | undefined, text: string): string {
    return expandVariables(text, {
      variable,
      global: (n) => this.globals.get(n),
      api: (cmd, arg) => this.syncApi(cmd, arg),
    })
  }

  // ---------------------------------------------------------------- creation

  /** Registers a new session and fires CHANNEL_CREATE (CS_INIT, capture 06). */
  add(s: Session): void {
    this.sessions.set(s.uuid, s)
    this.sessionsSinceStartup++
    this.peakSessions = Math.max(this.peakSessions, this.sessions.size)
    s.setVar('session_id', String(this.sessionsSinceStartup))
    s.setState('CS_INIT', 2)
    this.fireChannel('CHANNEL_CREATE', s)
    // Outbound legs wait in CS_CONSUME_MEDIA while they ring (captures 10, 11: HANGUP shows it).
    if (s.direction === 'outbound') s.setState('CS_CONSUME_MEDIA', 7)
  }

  newUuid(): string {
    return randomUUID()
  }

  /**
   * Starts the far end of an outbound leg: 180 then 200 after answer_after seconds, or a
   * refusal (486/603/503, no 180: capture 11), or ringing until cancelled (capture 10).
   */
  startFarEnd(s: Session): void {
    const fe = s.farEnd
    if (fe === undefined) return
    if (fe.refuse !== undefined) {
      const r = SIP_REFUSALS[fe.refuse]
      s.farEndTimers.push(
        this.clock.after(RESPONSE_DELAY_SEC, () => this.hangup(s, r.cause, { disposition: 'recv_refuse', sip: { status: r.status, phrase: r.phrase } })),
      )
      return
    }
    s.farEndTimers.push(this.clock.after(RESPONSE_DELAY_SEC, () => this.progress(s)))
    if (fe.answerAfter !== undefined) {
      const after = Math.max(fe.answerAfter, RESPONSE_DELAY_SEC)
      s.farEndTimers.push(
        this.clock.after(after, () => {
          this.progress(s)
          this.answer(s)
        }),
      )
    }
  }

  // ---------------------------------------------------------------- call progress

  /** 180 Ringing: CHANNEL_PROGRESS [CS_CONSUME_MEDIA/DOWN/ringing], then the call state is RINGING. */
  progress(s: Session): void {
    if (!s.up || s.ringReady || s.answered) return
    s.ringReady = true
    s.times.progress = nowMicros()
    if (s.direction === 'outbound') {
      s.profile.networkAddr = '127.0.0.1'
      const port = /:(\d+)$/.exec(s.name)?.[1]
      s.setVar('sip_network_ip', '127.0.0.1')
      if (port !== undefined) s.setVar('sip_network_port', port)
    }
    // An inbound channel sends the 180 (ring back) rather than receiving it: FreeSWITCH fires no
    // CHANNEL_PROGRESS for it (seen on a real 1.10.12 by test/realfs/: a phone's call to bob).
    if (s.direction === 'outbound') this.fireChannel('CHANNEL_PROGRESS', s)
    this.setCallState(s, 'RINGING')
    for (const h of [...s.progressHooks]) h(s)
  }

  /** 183 / pre_answer: CHANNEL_PROGRESS_MEDIA, Answer-State early. */
  preAnswer(s: Session): void {
    if (!s.up || s.answered || s.answerState === 'early') return
    s.times.progressMedia = nowMicros()
    s.mediaUp = true
    s.answerState = 'early'
    this.fireChannel('CHANNEL_PROGRESS_MEDIA', s)
    this.setCallState(s, 'EARLY')
  }

  /** 200 OK / answer: CHANNEL_ANSWER while the call state still lags (capture 06), then ACTIVE. */
  answer(s: Session): void {
    if (!s.up || s.answered) return
    // Answering a phone's call that had no early media: FreeSWITCH 1.10.12 fires
    // CHANNEL_PROGRESS_MEDIA just before CHANNEL_ANSWER (seen by test/realfs/, bridged and IVR).
    if (s.direction === 'inbound') this.preAnswer(s)
    s.answered = true
    s.answerState = 'answered'
    s.times.answered = nowMicros()
    s.mediaUp = true
    for (const [k, v] of MEDIA_VARS) s.setVar(k, v)
    this.fireChannel('CHANNEL_ANSWER', s)
    this.setCallState(s, 'ACTIVE')
    for (const h of [...s.answerHooks]) h(s)
    const fe = s.farEnd
    if (fe?.hangupAfter !== undefined) {
      s.farEndTimers.push(this.clock.after(fe.hangupAfter, () => this.remoteBye(s)))
    }
  }

  /** switch_channel_perform_set_callstate: CHANNEL_CALLSTATE with the previous state. */
  private setCallState(s: Session, state: string): void {
    const prev = s.callState
    if (prev === state) return
    s.callState = state
    this.fireChannel('CHANNEL_CALLSTATE', s, [['Original-Channel-Call-State', prev]])
  }

  /** The far end hangs up: BYE when answered (capture 25: recv_bye, 200), else CANCEL / 487. */
  remoteBye(s: Session, cause = 'NORMAL_CLEARING'): void {
    if (!s.up) return
    if (s.answered) this.hangup(s, cause, { disposition: 'recv_bye', sip: { status: 200, phrase: 'OK' } })
    else if (s.direction === 'inbound') this.hangup(s, cause, { disposition: 'recv_cancel' })
    else this.hangup(s, cause, { disposition: 'recv_refuse', sip: { status: 487, phrase: 'Request Terminated' } })
  }

  // ---------------------------------------------------------------- hangup

  /**
   * switch_channel_hangup: CHANNEL_HANGUP now; running applications end (their
   * CHANNEL_EXECUTE_COMPLETE follows, capture 06); the bridged leg is told; reporting later.
   */
  hangup(s: Session, cause: string, how: HangupHow = {}): void {
    if (!s.up) return
    s.hangupCause = cause
    s.answerState = 'hangup'
    s.stateNumber = 10
    const disposition = how.disposition ?? (s.answered ? 'send_bye' : s.direction === 'outbound' ? 'send_cancel' : 'send_refuse')
    s.hangupDisposition = disposition
    if (how.sip !== undefined) {
      const { status, phrase } = how.sip
      if (disposition === 'recv_refuse') {
        s.setVar('sip_hangup_disposition', 'recv_refuse')
        s.setVar('sip_invite_failure_status', String(status))
        s.setVar('sip_invite_failure_phrase', phrase)
      }
      s.setVar('sip_term_status', String(status))
      s.setVar('proto_specific_hangup_cause', `sip:${status}`)
      s.setVar('sip_term_cause', String(causeQ850(cause)))
    }
    for (const t of s.farEndTimers.splice(0)) t.cancel()
    for (const t of s.scheduled.splice(0)) t.cancel()
    this.fireChannel('CHANNEL_HANGUP', s)
    if (disposition === 'recv_bye') s.setVar('sip_hangup_disposition', 'recv_bye')
    for (const ac of [...s.appAborts]) ac.abort()
    for (const w of [...s.dtmfWaiters]) w()
    if (s.bridge !== undefined) this.bridgeHangup(s)
    for (const h of s.hangupHooks.splice(0)) h(s)
    setImmediate(() => void this.report(s))
  }

  /** CS_REPORTING: CHANNEL_HANGUP_COMPLETE (with the CDR variables), "reported" hooks, then DESTROY. */
  private async report(s: Session): Promise<void> {
    if (s.finalizeGate !== undefined) await s.finalizeGate
    const now = nowMicros()
    s.times.hangup = now
    s.setState('CS_REPORTING', 11)
    this.setCallState(s, 'HANGUP')
    if (s.hangupDisposition === 'send_bye' || s.hangupDisposition === 'send_cancel' || s.hangupDisposition === 'send_refuse') {
      s.setVar('sip_hangup_disposition', s.hangupDisposition)
    }
    if (s.hangupDisposition === 'send_cancel') {
      s.setVar('sip_invite_failure_status', '487')
      s.setVar('sip_invite_failure_phrase', 'CANCEL')
    }
    for (const [k, v] of cdrVars(s, now)) s.setVar(k, v)
    this.fireChannel('CHANNEL_HANGUP_COMPLETE', s, [], [['Hangup-Cause', s.hangupCause ?? 'NORMAL_CLEARING']])
    for (const h of s.reportedHooks.splice(0)) h(s)
    setImmediate(() => {
      s.stateNumber = 12
      // A bridged B leg gets its own call uuid back by CHANNEL_DESTROY (capture 19).
      s.callUuid = s.uuid
      s.setVar('call_uuid', s.uuid)
      this.fireChannel('CHANNEL_DESTROY', s)
      s.destroyed = true
      this.sessions.delete(s.uuid)
      s.resolveDestroyed()
    })
  }

  // ---------------------------------------------------------------- session thread

  /** Sets what the session does next and interrupts what it does now (or starts its thread). */
  requestStep(s: Session, step: NextStep): void {
    if (!s.up) return
    // Parking or routing a bridged leg takes it out of its bridge.
    if (s.bridge !== undefined && step.kind !== 'soft-bridge' && step.kind !== 'exchange') this.breakBridge(s)
    s.next = step
    if (s.threadRunning) {
      // A state change ends every application running on the session (sendmsg ones too).
      for (const ac of [...s.appAborts]) ac.abort()
      return
    }
    s.threadRunning = true
    void this.thread(s)
  }

  private async thread(s: Session): Promise<void> {
    try {
      while (s.up) {
        const step = s.next
        s.next = undefined
        if (step === undefined) break
        switch (step.kind) {
          case 'execute':
            await this.runExtension(s, step.apps)
            break
          case 'route':
            await this.route(s)
            break
          case 'park':
            await this.parkLoop(s)
            break
          case 'soft-bridge':
            await this.softBridge(s, step.bridge)
            break
          case 'exchange':
            await this.exchange(s, step.bridge)
            break
        }
      }
    } catch (e) {
      this.logger.error({ err: e, uuid: s.uuid }, 'sim: session thread failed')
      this.hangup(s, 'DESTINATION_OUT_OF_ORDER')
    } finally {
      s.threadRunning = false
    }
  }

  /** CS_EXECUTE: the extension's applications in order; the last one done, the channel hangs up. */
  private async runExtension(s: Session, apps: readonly QueuedApp[]): Promise<void> {
    s.setState('CS_EXECUTE', 4)
    s.hitDialplan = true
    for (const app of apps) {
      if (!s.up || s.next !== undefined) return
      await this.execApp(s, app.name, app.arg)
    }
    // switch_core_state_machine.c: "has executed the last dialplan instruction, hanging up."
    if (s.up && s.next === undefined) this.hangup(s, 'NORMAL_CLEARING')
  }

  /** CS_ROUTING: the XML dialplan (mod_xml_curl), or NO_ROUTE_DESTINATION (capture xml_curl/11). */
  private async route(s: Session): Promise<void> {
    s.setState('CS_ROUTING', 2)
    const apps = await huntDialplan(this, s, async (name, arg) => {
      await this.execApp(s, name, arg)
    })
    if (!s.up || s.next !== undefined) return
    if (apps === undefined || apps.length === 0) {
      this.hangup(s, 'NO_ROUTE_DESTINATION')
      return
    }
    await this.runExtension(s, apps)
  }

  /**
   * switch_core_session_exec: CHANNEL_EXECUTE, the application, CHANNEL_EXECUTE_COMPLETE with
   * Application-UUID (the sendmsg `event-uuid`, else a new uuid). Unknown applications hang the
   * channel up with DESTINATION_OUT_OF_ORDER (switch_core_session_execute_application_get_flags).
   */
  async execApp(s: Session, name: string, arg: string, opts: { appUuid?: string } = {}): Promise<void> {
    const impl = APPS[name]
    if (impl === undefined) {
      this.logger.warn({ uuid: s.uuid, app: name }, 'sim: Invalid Application')
      this.hangup(s, 'DESTINATION_OUT_OF_ORDER')
      return
    }
    const expanded = this.expand(s, arg)
    const appUuid = opts.appUuid ?? randomUUID()
    this.executed.push({ uuid: s.uuid, app: name, arg: expanded })
    s.currentApp = { name, arg: expanded }
    s.setVar('current_application', name)
    s.setVar('current_application_data', expanded)
    s.setVar('current_application_response', undefined)
    this.fireChannel('CHANNEL_EXECUTE', s, [
      ['Application', name],
      ['Application-Data', expanded],
      ['Application-UUID', appUuid],
    ])
    const ac = new AbortController()
    s.appAborts.add(ac)
    try {
      await impl(this, s, expanded, ac.signal)
    } catch (e) {
      this.logger.error({ err: e, uuid: s.uuid, app: name }, 'sim: application failed')
    } finally {
      s.appAborts.delete(ac)
    }
    s.setVar('last_app', name)
    s.setVar('last_arg', expanded)
    this.fireChannel('CHANNEL_EXECUTE_COMPLETE', s, [
      ['Application', name],
      ['Application-Data', expanded],
      ['Application-Response', s.getVar('current_application_response') ?? '_none_'],
      ['Application-UUID', appUuid],
    ])
    if (s.currentApp?.name === name) s.currentApp = undefined
  }

  /** sendmsg: private events run one at a time, beside whatever the session thread does. */
  queueMessage(s: Session, run: () => Promise<void>): void {
    s.messages.push(run)
    if (s.messagesRunning) return
    s.messagesRunning = true
    void (async () => {
      try {
        while (s.messages.length > 0) {
          const next = s.messages.shift()
          if (next !== undefined) await next()
        }
      } finally {
        s.messagesRunning = false
      }
    })()
  }

  // ---------------------------------------------------------------- park

  /** switch_ivr_park: CHANNEL_PARK, then wait until hangup or interruption (CHANNEL_UNPARK). */
  async park(s: Session, signal: AbortSignal): Promise<void> {
    if (!s.up) return
    s.setState('CS_EXECUTE', 4)
    this.fireChannel('CHANNEL_PARK', s)
    await untilAborted(signal)
    this.fireChannel('CHANNEL_UNPARK', s)
  }

  private async parkLoop(s: Session): Promise<void> {
    const ac = new AbortController()
    s.appAborts.add(ac)
    try {
      await this.park(s, ac.signal)
    } finally {
      s.appAborts.delete(ac)
    }
  }

  // ---------------------------------------------------------------- transfer

  /**
   * switch_ivr_session_transfer: a new caller profile (destination, context, dialplan, RDNIS,
   * Transfer-Source `<epoch>:<uuid>:bl_xfer:<dest>/<context>/<dialplan>`), then CS_ROUTING.
   * Missing dialplan/context default to the profile's, then XML / default.
   */
  transfer(s: Session, destination: string, dialplan?: string, context?: string): void {
    if (!s.up) return
    const dp = dialplan !== undefined && dialplan !== '' ? dialplan : (s.profile.dialplan ?? 'XML')
    const ctx = context !== undefined && context !== '' ? context : s.profile.context || 'default'
    if (s.bridge !== undefined) this.breakBridge(s)
    const now = nowMicros()
    const source = `${Math.floor(now / 1e6)}:${randomUUID()}:bl_xfer:${destination}/${ctx}/${dp}`
    s.profile = {
      ...s.profile,
      dialplan: dp,
      rdnis: s.profile.destinationNumber,
      destinationNumber: destination,
      context: ctx,
      transferSource: source,
      profileIndex: s.profile.profileIndex + 1,
      profileCreated: now,
    }
    s.times.transfer = now
    const history = s.getVar('transfer_history')
    s.setVar('transfer_history', history === undefined ? source : `${history}|${source}`)
    s.setVar('transfer_source', source)
    s.setVar('max_forwards', s.getVar('max_forwards') ?? '70')
    this.requestStep(s, { kind: 'route' })
  }

  // ---------------------------------------------------------------- bridge

  /** Links two legs as A (originator) and B (originatee), with the variables of captures 18/19. */
  linkBridge(a: Session, b: Session, viaApp: boolean): Bridge {
    const bridge = new Bridge(a, b, viaApp)
    a.bridge = bridge
    b.bridge = bridge
    const now = nowMicros()
    a.times.bridged = now
    b.times.bridged = now
    a.other = { type: 'originatee', uuid: b.uuid, profile: { ...b.profile }, times: b.times }
    b.other = { type: 'originator', uuid: a.uuid, profile: { ...a.profile }, times: a.times }
    b.callUuid = a.uuid
    b.setVar('call_uuid', a.uuid)
    a.setVar('bridge_channel', b.name)
    a.setVar('bridge_uuid', b.uuid)
    a.setVar('signal_bond', b.uuid)
    b.setVar('bridge_channel', a.name)
    b.setVar('bridge_uuid', a.uuid)
    b.setVar('signal_bond', a.uuid)
    a.setVar('bridge_to', b.uuid)
    b.setVar('bridge_to', a.uuid)
    return bridge
  }

  fireBridge(bridge: Bridge, name: 'CHANNEL_BRIDGE' | 'CHANNEL_UNBRIDGE'): void {
    this.fireChannel(name, bridge.a, [], [
      ['Bridge-A-Unique-ID', bridge.a.uuid],
      ['Bridge-B-Unique-ID', bridge.b.uuid],
    ])
  }

  private unbridgeVars(bridge: Bridge): void {
    const { a, b } = bridge
    for (const [me, them] of [
      [a, b],
      [b, a],
    ] as const) {
      me.setVar('bridge_to', undefined)
      me.setVar('last_bridge_to', them.uuid)
    }
    const bCause = b.hangupCause
    if (bCause !== undefined) {
      a.setVar('last_bridge_hangup_cause', bCause)
      const term = b.getVar('sip_term_status')
      if (term !== undefined) a.setVar('last_bridge_proto_specific_hangup_cause', `sip:${term}`)
      a.setVar('bridge_hangup_cause', bCause)
    }
    const aCause = a.hangupCause
    if (aCause !== undefined) b.setVar('last_bridge_hangup_cause', aCause)
  }

  /**
   * A bridged leg hangs up. B hangs up: one CHANNEL_UNBRIDGE on A, A's bridge ends (capture 19).
   * A hangs up: B is hung up (NORMAL_CLEARING, send_bye), then the UNBRIDGE on A, and A's
   * reporting waits for B's destruction (capture 18).
   */
  private bridgeHangup(s: Session): void {
    const bridge = s.bridge
    if (bridge === undefined) return
    bridge.a.bridge = undefined
    bridge.b.bridge = undefined
    if (s === bridge.a) {
      this.hangup(bridge.b, 'NORMAL_CLEARING')
      this.unbridgeVars(bridge)
      this.fireBridge(bridge, 'CHANNEL_UNBRIDGE')
      bridge.a.finalizeGate = bridge.b.destroyedPromise
      bridge.finish({ by: 'a', cause: s.hangupCause ?? 'NORMAL_CLEARING' })
    } else {
      this.unbridgeVars(bridge)
      this.fireBridge(bridge, 'CHANNEL_UNBRIDGE')
      bridge.finish({ by: 'b', cause: s.hangupCause ?? 'NORMAL_CLEARING' })
    }
  }

  /**
   * A leg leaves its bridge without hanging up (transfer, a new uuid_bridge): when A leaves, B
   * (which has nothing else to run) is hung up; when B leaves, A goes on as after any bridge.
   */
  private breakBridge(s: Session): void {
    const bridge = s.bridge
    if (bridge === undefined) return
    bridge.a.bridge = undefined
    bridge.b.bridge = undefined
    this.unbridgeVars(bridge)
    this.fireBridge(bridge, 'CHANNEL_UNBRIDGE')
    if (s === bridge.a) {
      bridge.finish({ by: 'a', cause: 'NORMAL_CLEARING' })
      this.hangup(bridge.b, 'NORMAL_CLEARING')
    } else {
      bridge.finish({ by: 'b', cause: 'NORMAL_CLEARING' })
    }
  }

  /**
   * After the bridge: hangup_after_bridge (the peer's cause), park_after_bridge,
   * transfer_after_bridge, else go on (switch_ivr_bridge.c, end of switch_ivr_multi_threaded_bridge).
   */
  afterBridge(a: Session, end: { cause: string }, hangupByDefault: boolean): void {
    // A transfer already decided what A does next (uuid_transfer -both).
    if (!a.up || a.next !== undefined) return
    if (isTrue(a.getVar('park_after_bridge'))) {
      this.requestStep(a, { kind: 'park' })
      return
    }
    const xfer = a.getVar('transfer_after_bridge')
    if (xfer !== undefined) {
      const [dest, dp, ctx] = xfer.split(':')
      if (dest !== undefined && dest !== '') {
        this.transfer(a, dest, dp, ctx)
        return
      }
    }
    if (hangupByDefault || isTrue(a.getVar('hangup_after_bridge'))) this.hangup(a, end.cause)
  }

  /** uuid_bridge originator (CS_SOFT_EXECUTE): CHANNEL_BRIDGE on A, wait for the end (capture 18). */
  private async softBridge(a: Session, bridge: Bridge): Promise<void> {
    if (bridge.ended) return
    a.setState('CS_SOFT_EXECUTE', 3)
    this.fireBridge(bridge, 'CHANNEL_BRIDGE')
    const end = await bridge.done
    // A uuid_bridge'd leg has no extension to go back to: it hangs up with its peer.
    if (end.by === 'b') this.afterBridge(a, end, true)
  }

  /** uuid_bridge originatee (CS_EXCHANGE_MEDIA) until the bridge ends. */
  private async exchange(b: Session, bridge: Bridge): Promise<void> {
    if (bridge.ended) return
    b.setState('CS_EXCHANGE_MEDIA', 5)
    const end = await bridge.done
    if (end.by === 'a' && b.up && bridge.b === b) this.hangup(b, 'NORMAL_CLEARING')
  }

  /**
   * uuid_bridge (switch_ivr_uuid_bridge): one leg must be answered (it becomes the originator);
   * both stop what they do (CHANNEL_EXECUTE_COMPLETE of park on B then A, state number 8), then
   * one CHANNEL_BRIDGE on A (capture 18).
   */
  uuidBridge(aUuid: string, bUuid: string): boolean {
    let a = this.sessions.get(aUuid)
    let b = this.sessions.get(bUuid)
    if (a === undefined || b === undefined || a === b || !a.up || !b.up) return false
    if (!a.answered && !a.mediaUp) {
      if (!b.answered && !b.mediaUp) return false
      ;[a, b] = [b, a]
    }
    for (const s of [a, b]) if (s.bridge !== undefined) this.breakBridge(s)
    a.setVar('uuid_bridge', b.uuid)
    a.setVar('original_destination_number', a.profile.destinationNumber)
    b.setVar('original_destination_number', b.profile.destinationNumber)
    const bridge = this.linkBridge(a, b, false)
    a.stateNumber = 8
    b.stateNumber = 8
    this.requestStep(b, { kind: 'exchange', bridge })
    this.requestStep(a, { kind: 'soft-bridge', bridge })
    return true
  }

  // ---------------------------------------------------------------- DTMF

  /** Queues digits as received from the far end and fires one DTMF event per digit. */
  receiveDtmf(s: Session, digits: string): void {
    if (!s.up) return
    for (const d of digits) {
      s.dtmfBuffer += d
      this.fireChannel('DTMF', s, [
        ['DTMF-Digit', d],
        ['DTMF-Duration', '2000'],
        ['DTMF-Source', 'RTP'],
      ])
    }
    for (const w of [...s.dtmfWaiters]) w()
  }

  // ---------------------------------------------------------------- shutdown

  async close(): Promise<void> {
    const all = [...this.sessions.values()]
    for (const s of all) this.hangup(s, 'SYSTEM_SHUTDOWN')
    this.shutdown.abort()
    await Promise.race([Promise.all(all.map((s) => s.destroyedPromise)), new Promise((r) => setTimeout(r, 2000).unref())])
    this.clock.close()
  }
}

export const isTrue = (v: string | undefined): boolean => v !== undefined && /^(true|yes|on|enabled|active|allow|1)$/i.test(v)

export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
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

/** Variables FreeSWITCH sets once media is negotiated (capture 06 CHANNEL_ANSWER). */
const MEDIA_VARS: ReadonlyArray<readonly [string, string]> = [
  ['rtp_use_codec_name', 'PCMU'],
  ['rtp_use_codec_rate', '8000'],
  ['rtp_use_codec_ptime', '20'],
  ['read_codec', 'PCMU'],
  ['original_read_codec', 'PCMU'],
  ['read_rate', '8000'],
  ['original_read_rate', '8000'],
  ['write_codec', 'PCMU'],
  ['write_rate', '8000'],
  ['dtmf_type', 'rfc2833'],
]

/** The CDR variables of CHANNEL_HANGUP_COMPLETE (capture 11: hangup_cause, *_epoch, duration, billsec...). */
function cdrVars(s: Session, endMicros: number): Array<[string, string]> {
  const t = s.times
  const sec = (us: number): string => String(Math.floor(us / 1e6))
  const stamp = (us: number): string => localStamp(new Date(Math.floor(us / 1000)))
  const diff = (from: number, to: number): number => (from > 0 && to > 0 ? Math.max(0, to - from) : 0)
  const cause = s.hangupCause ?? 'NORMAL_CLEARING'
  const bill = diff(t.answered, endMicros)
  const dur = diff(t.created, endMicros)
  const wait = t.answered > 0 ? diff(t.created, t.answered) : 0
  const progressWait = diff(t.created, t.progress)
  const out: Array<[string, string]> = [
    ['hangup_cause', cause],
    ['hangup_cause_q850', String(causeQ850(cause))],
    ['digits_dialed', 'none'],
    ['start_stamp', stamp(t.created)],
    ['profile_start_stamp', stamp(s.profile.profileCreated)],
  ]
  if (t.answered > 0) out.push(['answer_stamp', stamp(t.answered)])
  if (t.bridged > 0) out.push(['bridge_stamp', stamp(t.bridged)])
  if (t.progress > 0) out.push(['progress_stamp', stamp(t.progress)])
  out.push(
    ['end_stamp', stamp(endMicros)],
    ['start_epoch', sec(t.created)],
    ['start_uepoch', String(t.created)],
    ['profile_start_epoch', sec(s.profile.profileCreated)],
    ['profile_start_uepoch', String(s.profile.profileCreated)],
    ['answer_epoch', sec(t.answered)],
    ['answer_uepoch', String(t.answered)],
    ['bridge_epoch', sec(t.bridged)],
    ['bridge_uepoch', String(t.bridged)],
    ['progress_epoch', sec(t.progress)],
    ['progress_uepoch', String(t.progress)],
    ['end_epoch', sec(endMicros)],
    ['end_uepoch', String(endMicros)],
    ['caller_id', s.profile.callerIdName !== undefined ? `"${s.profile.callerIdName}" <${s.profile.callerIdNumber ?? ''}>` : (s.profile.callerIdNumber ?? '')],
    ['duration', String(Math.round(dur / 1e6))],
    ['billsec', String(Math.round(bill / 1e6))],
    ['progresssec', String(Math.round(progressWait / 1e6))],
    ['waitsec', String(Math.round(wait / 1e6))],
    ['mduration', String(Math.round(dur / 1000))],
    ['billmsec', String(Math.round(bill / 1000))],
    ['progressmsec', String(Math.round(progressWait / 1000))],
    ['waitmsec', String(Math.round(wait / 1000))],
    ['uduration', String(dur)],
    ['billusec', String(bill)],
    ['progressusec', String(progressWait)],
    ['waitusec', String(wait)],
  )
  return out
}
