/**
 * What a session runs (FreeSWITCH's session thread and its state machine): a dialplan
 * extension or an originate `&app`, CS_ROUTING through the dialplan, park, the uuid_bridge
 * states, a transfer back to routing; the applications themselves (CHANNEL_EXECUTE and
 * _COMPLETE around each); and the private event queue sendmsg feeds.
 *
 * It runs applications and hunts the dialplan it was given, without knowing any of them. The
 * bridge states belong to the bridging part above it, reached through `BridgeSteps`.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../../util/logger.js'
import { untilAborted } from '../model/clock.js'
import { nowMicros } from '../model/events.js'
import type { Bridge, NextStep, QueuedApp, Session } from '../model/session.js'
import type { ChannelTable } from './channel-table.js'
import type { ChannelLife } from './lifecycle.js'
import type { AppTable, DialplanHunter, ExecutedApp, Switch } from './switch.js'
import { BoundedLog } from './bounded-log.js'

/** The bridge work the session thread hands over (implemented by the bridging part). */
export interface BridgeSteps {
  /** Takes a leg out of its bridge without hanging it up. */
  leave(s: Session): void
  /** uuid_bridge originator until the bridge ends. */
  softBridge(a: Session, bridge: Bridge): Promise<void>
  /** uuid_bridge originatee until the bridge ends. */
  exchange(b: Session, bridge: Bridge): Promise<void>
}

export interface SessionThreadParts {
  readonly table: ChannelTable
  readonly life: ChannelLife
  readonly logger: Logger
  /** Handed to every application and to the dialplan hunter. */
  readonly sw: Switch
  readonly apps: AppTable
  readonly dialplan: DialplanHunter
  readonly bridges: BridgeSteps
}

export class SessionThread {
  /** Every application run, the latest DEFAULT_HISTORY (Simulator.executedApps). */
  readonly executed = new BoundedLog<ExecutedApp>()

  constructor(private readonly parts: SessionThreadParts) {}

  /** Sets what the session does next and interrupts what it does now (or starts its thread). */
  requestStep(s: Session, step: NextStep): void {
    if (!s.up) return
    // Parking or routing a bridged leg takes it out of its bridge.
    if (s.bridge !== undefined && step.kind !== 'soft-bridge' && step.kind !== 'exchange') this.parts.bridges.leave(s)
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
            await this.parts.bridges.softBridge(s, step.bridge)
            break
          case 'exchange':
            await this.parts.bridges.exchange(s, step.bridge)
            break
        }
      }
    } catch (e) {
      this.parts.logger.error({ err: e, uuid: s.uuid }, 'sim: session thread failed')
      this.parts.life.hangup(s, 'DESTINATION_OUT_OF_ORDER')
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
    if (s.up && s.next === undefined) this.parts.life.hangup(s, 'NORMAL_CLEARING')
  }

  /**
   * CS_ROUTING: the XML dialplan (mod_xml_curl), or NO_ROUTE_DESTINATION
   * (test/fixtures/freeswitch/xml_curl/11-dialplan-wrong-context.txt).
   */
  private async route(s: Session): Promise<void> {
    s.setState('CS_ROUTING', 2)
    const apps = await this.parts.dialplan(this.parts.sw, s, async (name, arg) => {
      await this.execApp(s, name, arg)
    })
    if (!s.up || s.next !== undefined) return
    if (apps === undefined || apps.length === 0) {
      this.parts.life.hangup(s, 'NO_ROUTE_DESTINATION')
      return
    }
    await this.runExtension(s, apps)
  }

  /**
   * switch_core_session_exec: CHANNEL_EXECUTE, the application, CHANNEL_EXECUTE_COMPLETE with
   * Application-UUID (the sendmsg `event-uuid`, else a new uuid) and, when the sendmsg named it
   * (`event-uuid-name`), Application-UUID-Name. Unknown applications hang the
   * channel up with DESTINATION_OUT_OF_ORDER (switch_core_session_execute_application_get_flags).
   */
  async execApp(s: Session, name: string, arg: string, opts: { appUuid?: string; appUuidName?: string } = {}): Promise<void> {
    const { table, logger } = this.parts
    const impl = this.parts.apps[name]
    if (impl === undefined) {
      logger.warn({ uuid: s.uuid, app: name }, 'sim: Invalid Application')
      this.parts.life.hangup(s, 'DESTINATION_OUT_OF_ORDER')
      return
    }
    const expanded = table.expand(s, arg)
    const appUuid = opts.appUuid ?? randomUUID()
    this.executed.push({ uuid: s.uuid, app: name, arg: expanded })
    s.currentApp = { name, arg: expanded }
    s.setVar('current_application', name)
    s.setVar('current_application_data', expanded)
    s.setVar('current_application_response', undefined)
    const named: Array<[string, string]> = opts.appUuidName === undefined ? [] : [['Application-UUID-Name', opts.appUuidName]]
    table.fireChannel('CHANNEL_EXECUTE', s, [['Application', name], ['Application-Data', expanded], ['Application-UUID', appUuid], ...named])
    const ac = new AbortController()
    s.appAborts.add(ac)
    try {
      await impl(this.parts.sw, s, expanded, ac.signal)
    } catch (e) {
      logger.error({ err: e, uuid: s.uuid, app: name }, 'sim: application failed')
    } finally {
      s.appAborts.delete(ac)
    }
    s.setVar('last_app', name)
    s.setVar('last_arg', expanded)
    table.fireChannel('CHANNEL_EXECUTE_COMPLETE', s, [
      ['Application', name],
      ['Application-Data', expanded],
      ['Application-Response', s.getVar('current_application_response') ?? '_none_'],
      ['Application-UUID', appUuid],
      ...named,
    ])
    if (s.currentApp?.name === name) s.currentApp = undefined
  }

  /**
   * switch_channel_execute_on_value: an `execute_on_*` variable's application (issue 29: the
   * daemon's time limit and DTMF on answer), run at once by the thread that marks the channel,
   * not queued on the session: CHANNEL_EXECUTE and CHANNEL_EXECUTE_COMPLETE around it before
   * whatever that thread fires next (test/fixtures/freeswitch/esl/33-time-limit-send-digits.txt:
   * both applications' pairs between CHANNEL_ANSWER and the call state ACTIVE). Only applications
   * that finish at once are run this way (sched_hangup, send_dtmf); any other completes later.
   */
  executeOn(s: Session, value: string): void {
    const sp = value.indexOf(' ')
    const name = sp < 0 ? value : value.slice(0, sp)
    const arg = sp < 0 ? '' : value.slice(sp + 1)
    const { table } = this.parts
    const impl = this.parts.apps[name]
    if (impl === undefined) {
      this.parts.logger.warn({ uuid: s.uuid, app: name }, 'sim: Invalid Application')
      this.parts.life.hangup(s, 'DESTINATION_OUT_OF_ORDER')
      return
    }
    const expanded = table.expand(s, arg)
    const appUuid = randomUUID()
    this.executed.push({ uuid: s.uuid, app: name, arg: expanded })
    const headers: Array<[string, string]> = [
      ['Application', name],
      ['Application-Data', expanded],
    ]
    table.fireChannel('CHANNEL_EXECUTE', s, [...headers, ['Application-UUID', appUuid]])
    const done = impl(this.parts.sw, s, expanded, new AbortController().signal)
    const complete = () => table.fireChannel('CHANNEL_EXECUTE_COMPLETE', s, [...headers, ['Application-Response', '_none_'], ['Application-UUID', appUuid]])
    if (done instanceof Promise) void done.then(complete, complete)
    else complete()
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
    this.parts.table.fireChannel('CHANNEL_PARK', s)
    await untilAborted(signal)
    this.parts.table.fireChannel('CHANNEL_UNPARK', s)
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
    if (s.bridge !== undefined) this.parts.bridges.leave(s)
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
}
