/**
 * switch_ivr_originate (switch_ivr_originate.c, v1.10.12) for the simulator: failover groups
 * tried in turn, the legs of a group rung together, the first to answer wins and the others are
 * hung up with LOSE_RACE (test/fixtures/freeswitch/esl/17-two-legs-race.txt,
 * group_dial_status=loser).
 *
 * - originate_timeout (else the caller's call_timeout, else the API's timeout, else 60 s)
 *   bounds each group; at expiry the ringing legs hang up NO_ANSWER and the originate fails
 *   NO_ANSWER at once, before their HANGUP_COMPLETE
 *   (test/fixtures/freeswitch/esl/10-no-answer.txt), and stops unless
 *   originate_continue_on_timeout=true.
 * - leg_timeout (per leg): that leg hangs up ALLOTTED_TIMEOUT (check_per_channel_timeouts).
 * - When every leg of a group failed, the result is the first created leg's cause (else the
 *   last creation failure), once that leg is reported (after HANGUP_COMPLETE,
 *   test/fixtures/freeswitch/esl/11-busy-486.txt).
 * - origination_uuid in `[]` names that leg; in `{}` it is used by the first channel only
 *   (docs/design.md "Lessons from FreeSWITCH"). An existing uuid fails with
 *   DESTINATION_OUT_OF_ORDER, no events
 *   (test/fixtures/freeswitch/esl/23-duplicate-origination-uuid.txt). So does a leg over the
 *   session rate ("Throttle Error!", core/session-rate.ts;
 *   test/fixtures/freeswitch/esl/35-sessions-per-second.txt), checked after the uuid as FreeSWITCH does.
 * - A calling session (bridge) gives the new legs Other-Leg/Channel-Call-UUID
 *   (test/fixtures/freeswitch/esl/19-originate-xml-default.txt), its caller id and exported
 *   variables, gets ring-back when a leg rings, and cancels the legs with ORIGINATOR_CANCEL when it
 *   hangs up.
 * - A `{}` or `[]` variable whose value holds `${` is refused, not set (check_vars: every one goes
 *   through switch_channel_set_variable_var_check, "Invalid data (${<name>} contains a
 *   variable)"), unless the dial string holds `origination_nested_vars=true` (switch_stristr,
 *   any case) or the calling channel or the globals say origination_nested_vars: then it is set
 *   as written (FreeSWITCH 1.10.12: `[v='a${x}b']` unset, the same with that text `a${x}b`).
 */
import type { Switch } from '../core/switch.js'
import type { TimerHandle } from '../model/clock.js'
import { Session } from '../model/session.js'
import { parseDialString, varsToMap } from '../text/dialstring.js'
import type { VarList } from '../text/fs-strings.js'
import { isTrue } from '../text/switch-true.js'
import { mergeVars, resolveLeg, type LegPlan } from './endpoints.js'

export interface OriginateOptions {
  readonly dialString: string
  /** The session that originates (the bridge application's A leg). */
  readonly caller?: Session
  /** The timelimit argument (originate API timeout, default 60). */
  readonly timeoutSec?: number
  readonly cidName?: string
  readonly cidNum?: string
  /** Aborting cancels the attempt (the caller hung up). */
  readonly signal?: AbortSignal
}

export type OriginateOutcome =
  | { readonly ok: true; readonly session: Session; readonly legs: readonly Session[] }
  | { readonly ok: false; readonly cause: string; readonly legs: readonly Session[] }

type RaceResult = { ok: true; winner: Session } | { ok: false; cause: string; timeout?: boolean; cancelled?: boolean }

const positive = (v: string | undefined): number | undefined => {
  const n = v === undefined ? NaN : parseInt(v, 10)
  return Number.isFinite(n) && n > 0 ? n : undefined
}

export async function originate(sw: Switch, opts: OriginateOptions): Promise<OriginateOutcome> {
  const parsed = parseDialString(opts.dialString)
  if (parsed === undefined) return { ok: false, cause: 'DESTINATION_OUT_OF_ORDER', legs: [] }
  const caller = opts.caller
  const checkVars = !(
    /origination_nested_vars=true/i.test(opts.dialString) ||
    isTrue(caller?.getVar('origination_nested_vars')) ||
    isTrue(sw.globals.get('origination_nested_vars'))
  )
  const passingCheck = (vars: VarList): VarList => (checkVars ? vars.filter(([, value]) => !value.includes('${')) : vars)
  const globals = mergeVars(inherited(caller), passingCheck(parsed.globals))
  const g = varsToMap(globals)
  const timelimit = positive(g.get('originate_timeout')) ?? positive(caller?.getVar('call_timeout')) ?? (opts.timeoutSec !== undefined && opts.timeoutSec > 0 ? opts.timeoutSec : 60)
  const continueOnTimeout = isTrue(g.get('originate_continue_on_timeout'))
  let globalUuid = g.get('origination_uuid')
  const allLegs: Session[] = []
  let lastCause = 'DESTINATION_OUT_OF_ORDER'
  const cancelled = (): boolean => opts.signal?.aborted === true || (caller !== undefined && !caller.up)

  for (const group of parsed.groups) {
    if (cancelled()) return { ok: false, cause: 'ORIGINATOR_CANCEL', legs: allLegs }
    const plans: Array<{ plan: LegPlan; localUuid?: string; first: boolean }> = []
    for (const leg of group) {
      const vars = mergeVars(passingCheck(leg.vars), globals)
      const localUuid = varsToMap(leg.vars).get('origination_uuid')
      const resolved = await resolveLeg(sw, leg.endpoint, vars)
      resolved.forEach((plan, i) => plans.push({ plan, ...(localUuid !== undefined ? { localUuid } : {}), first: i === 0 }))
    }
    if (cancelled()) return { ok: false, cause: 'ORIGINATOR_CANCEL', legs: allLegs }

    const sessions: Session[] = []
    let creationFailure: string | undefined
    for (const { plan, localUuid, first } of plans) {
      if (plan.kind === 'fail') {
        creationFailure = plan.cause
        continue
      }
      let uuid: string | undefined
      if (localUuid !== undefined && first) uuid = localUuid
      else if (localUuid === undefined && globalUuid !== undefined) {
        uuid = globalUuid
        globalUuid = undefined
      }
      if (uuid !== undefined && sw.sessions.has(uuid)) {
        creationFailure = 'DESTINATION_OUT_OF_ORDER'
        continue
      }
      if (!sw.sessionRate.request()) {
        sw.logger.warn({ sessions: sw.sessions.size }, `Throttle Error! ${sw.sessions.size}`)
        creationFailure = 'DESTINATION_OUT_OF_ORDER'
        continue
      }
      const s = buildSession(sw, plan, uuid, opts)
      sw.add(s)
      sessions.push(s)
    }
    if (sessions.length === 0) {
      lastCause = creationFailure ?? 'DESTINATION_OUT_OF_ORDER'
      continue
    }
    allLegs.push(...sessions)
    for (const s of sessions) sw.startFarEnd(s)
    const result = await race(sw, sessions, timelimit, opts)
    if (result.ok) {
      const w = result.winner
      w.setVar('endpoint_disposition', 'ANSWER')
      if (caller === undefined) flipCallerId(w)
      return { ok: true, session: w, legs: allLegs }
    }
    lastCause = result.cause
    if (result.cancelled === true) break
    if (result.timeout === true && !continueOnTimeout) break
  }
  return { ok: false, cause: lastCause, legs: allLegs }
}

/** Variables a bridge's legs take from the calling session: its exported ones (export_vars). */
function inherited(caller: Session | undefined): VarList {
  if (caller === undefined) return []
  const out: VarList = []
  const exported = caller.getVar('export_vars')
  if (exported !== undefined) {
    for (const written of exported.split(',').map((n) => n.trim())) {
      // switch_channel_process_export: `nolocal:X` reaches the new leg as X.
      const v = caller.getVar(written)
      if (v !== undefined) out.push([written.replace(/^nolocal:/, ''), v])
    }
    out.push(['export_vars', exported])
  }
  // mod_sofia.c sofia_outgoing_channel: the calling channel's sip_h_* variables (custom SIP
  // headers) are copied to the new leg unless it says sip_copy_custom_headers=false.
  if (caller.getVar('sip_copy_custom_headers') !== 'false') {
    for (const [name, value] of caller.vars) if (name.toLowerCase().startsWith('sip_h_')) out.push([name, value])
  }
  const iem = caller.getVar('ignore_early_media')
  if (iem !== undefined) out.push(['ignore_early_media', iem])
  return out
}

function buildSession(sw: Switch, plan: Extract<LegPlan, { kind: 'channel' }>, uuidIn: string | undefined, opts: OriginateOptions): Session {
  const uuid = uuidIn ?? sw.newUuid()
  const caller = opts.caller
  const v = varsToMap(plan.vars)
  const cidName = v.get('origination_caller_id_name') ?? opts.cidName ?? (caller === undefined ? undefined : (caller.getVar('effective_caller_id_name') ?? caller.profile.callerIdName))
  const cidNum =
    v.get('origination_caller_id_number') ?? opts.cidNum ?? (caller === undefined ? '0000000000' : (caller.getVar('effective_caller_id_number') ?? caller.profile.callerIdNumber ?? '0000000000'))
  const s = Session.outbound(uuid, plan.name, {
    direction: 'outbound',
    logicalDirection: 'outbound',
    ...(caller !== undefined ? { dialplan: 'XML' } : {}),
    ...(cidName !== undefined ? { callerIdName: cidName } : {}),
    callerIdNumber: cidNum,
    ...(caller?.profile.origCallerIdName !== undefined ? { origCallerIdName: caller.profile.origCallerIdName } : {}),
    origCallerIdNumber: caller?.profile.origCallerIdNumber ?? caller?.profile.callerIdNumber ?? cidNum,
    calleeIdName: 'Outbound Call',
    calleeIdNumber: plan.destination,
    ani: caller?.profile.ani ?? cidNum,
    destinationNumber: plan.destination,
    source: 'src/switch_ivr_originate.c',
    context: caller?.profile.context ?? 'default',
    ...(caller?.profile.rdnis !== undefined ? { rdnis: caller.profile.rdnis } : {}),
  })
  s.farEnd = plan.farEnd
  s.originatedByApi = caller === undefined
  s.setVar('direction', 'outbound')
  s.setVar('is_outbound', 'true')
  s.setVar('uuid', uuid)
  s.setVar('call_uuid', caller?.uuid ?? uuid)
  s.setVar('session_id', String(sw.sessionsSinceStartup + 1))
  s.setVar('sip_local_network_addr', '127.0.0.1')
  s.setVar('sip_profile_name', sw.profile)
  s.setVar('video_media_flow', 'disabled')
  s.setVar('text_media_flow', 'disabled')
  s.setVar('channel_name', plan.name)
  for (const [k, val] of plan.vars) {
    if (k === 'origination_uuid' && val !== uuid) continue
    s.setVar(k, val)
  }
  if (uuidIn !== undefined) s.setVar('origination_uuid', uuidIn)
  s.setVar('originate_endpoint', s.getVar('originate_endpoint') ?? plan.endpoint)
  const presence = s.getVar('presence_id')
  if (presence !== undefined) s.presenceId = presence
  if (caller !== undefined) {
    s.callUuid = caller.uuid
    s.other = { type: 'originator', uuid: caller.uuid, profile: { ...caller.profile } }
    s.setVar('max_forwards', '69')
    s.setVar('originator_codec', 'PCMU@8000h@20i')
    s.setVar('originator', caller.uuid)
    s.setVar('signal_bond', caller.uuid)
  }
  return s
}

/**
 * switch_channel_flip_cid on the answered leg of an originate without a calling session
 * (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt: CHANNEL_PARK shows
 * Caller-Caller-ID-Name "Outbound Call" and the number dialed).
 */
function flipCallerId(s: Session): void {
  const p = s.profile
  const callee = { name: p.calleeIdName, number: p.calleeIdNumber }
  s.setVar('pre_transfer_caller_id_number', p.callerIdNumber)
  s.profile = {
    ...p,
    ...(callee.name !== undefined ? { callerIdName: callee.name } : {}),
    ...(callee.number !== undefined ? { callerIdNumber: callee.number } : {}),
  }
  if (p.callerIdName !== undefined) s.profile.calleeIdName = p.callerIdName
  else delete s.profile.calleeIdName
  if (p.callerIdNumber !== undefined) s.profile.calleeIdNumber = p.callerIdNumber
  s.setVar('channel_cid_flipped', 'yes')
}

function race(sw: Switch, legs: Session[], timelimit: number, opts: OriginateOptions): Promise<RaceResult> {
  return new Promise<RaceResult>((resolve) => {
    let settled = false
    const timers: TimerHandle[] = []
    const reported = new Set<Session>()
    const onAbort = (): void => {
      if (settled) return
      finish({ ok: false, cause: 'ORIGINATOR_CANCEL', cancelled: true })
      for (const l of legs) sw.hangup(l, 'ORIGINATOR_CANCEL')
    }
    const finish = (r: RaceResult): void => {
      if (settled) return
      settled = true
      for (const t of timers) t.cancel()
      opts.signal?.removeEventListener('abort', onAbort)
      resolve(r)
    }
    const checkFailed = (): void => {
      if (settled || !legs.every((l) => !l.up && reported.has(l))) return
      finish({ ok: false, cause: legs[0]?.hangupCause ?? 'NORMAL_CLEARING' })
    }
    for (const leg of legs) {
      leg.answerHooks.push((w) => {
        if (settled) return
        for (const l of legs) {
          if (l === w || !l.up) continue
          l.setVar('group_dial_status', 'loser')
          sw.hangup(l, 'LOSE_RACE')
        }
        finish({ ok: true, winner: w })
      })
      leg.progressHooks.push(() => {
        const c = opts.caller
        if (c !== undefined && c.up && !c.answered) sw.progress(c)
      })
      leg.reportedHooks.push((l) => {
        reported.add(l)
        checkFailed()
      })
      const legTimeout = positive(leg.getVar('leg_timeout'))
      if (legTimeout !== undefined) {
        timers.push(
          sw.clock.after(legTimeout, () => {
            if (leg.up && !leg.answered) sw.hangup(leg, 'ALLOTTED_TIMEOUT')
          }),
        )
      }
    }
    timers.push(
      sw.clock.after(timelimit, () => {
        if (settled) return
        const ringing = legs.filter((l) => l.up)
        if (ringing.length === 0) return
        finish({ ok: false, cause: 'NO_ANSWER', timeout: true })
        for (const l of ringing) sw.hangup(l, 'NO_ANSWER')
      }),
    )
    opts.signal?.addEventListener('abort', onAbort, { once: true })
  })
}
