/**
 * A channel's life from its far end's point of view: ringing, early media, answer, DTMF
 * received, and the hangup with its reporting (CHANNEL_HANGUP, HANGUP_COMPLETE, DESTROY).
 *
 * Event order is what the captures show (test/fixtures/freeswitch/README.md, "Facts that hold
 * across the sessions"; test/fixtures/freeswitch/esl/00-event-sequences.txt):
 * CHANNEL_HANGUP is fired at once; CHANNEL_HANGUP_COMPLETE and CHANNEL_DESTROY follow on later
 * turns of the event loop (setImmediate), so whoever reacts to a hangup synchronously (an
 * originate timing out: BACKGROUND_JOB before HANGUP_COMPLETE,
 * test/fixtures/freeswitch/esl/10-no-answer.txt) or on the "reported" hook between the two (a
 * refused or killed leg: BACKGROUND_JOB after HANGUP_COMPLETE and before DESTROY,
 * test/fixtures/freeswitch/esl/11-busy-486.txt and 24-uuid-kill-ringing-leg.txt) lands where
 * FreeSWITCH puts it. Everything that must come before a later event runs in promise continuations
 * (microtasks), never on timers.
 */
import { causeQ850, SIP_REFUSALS } from '../model/causes.js'
import type { Clock } from '../model/clock.js'
import { nowMicros } from '../model/events.js'
import type { Session } from '../model/session.js'
import { cdrVars } from './cdr.js'
import type { ChannelTable } from './channel-table.js'
import type { HangupHow } from './switch.js'

/** Delay between INVITE and the far end's 180 or final refusal (captures: ~20 ms). */
const RESPONSE_DELAY_SEC = 0.02

/**
 * What a hangup must tell the bridge a leg is in (its peer, CHANNEL_UNBRIDGE). The bridging part
 * sits above this one, so it is handed in rather than imported.
 */
export type BridgedHangup = (s: Session) => void

/** Runs an `execute_on_*` variable's `<app> <arg>` at once (the session thread above this part). */
export type ExecuteOn = (s: Session, value: string) => void

export class ChannelLife {
  constructor(
    private readonly table: ChannelTable,
    private readonly clock: Clock,
    private readonly bridgedHangup: BridgedHangup,
    private readonly executeOn: ExecuteOn = () => undefined,
  ) {}

  /**
   * Starts the far end of an outbound leg: 180 then 200 after answer_after seconds, or a
   * refusal (486/603/503, no 180: test/fixtures/freeswitch/esl/11-busy-486.txt), or ringing until
   * cancelled (test/fixtures/freeswitch/esl/10-no-answer.txt).
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
    if (s.direction === 'outbound') this.table.fireChannel('CHANNEL_PROGRESS', s)
    this.setCallState(s, 'RINGING')
    for (const h of [...s.progressHooks]) h(s)
  }

  /** 183 / pre_answer: CHANNEL_PROGRESS_MEDIA, Answer-State early. */
  preAnswer(s: Session): void {
    if (!s.up || s.answered || s.answerState === 'early') return
    s.times.progressMedia = nowMicros()
    s.mediaUp = true
    s.answerState = 'early'
    this.table.fireChannel('CHANNEL_PROGRESS_MEDIA', s)
    this.setCallState(s, 'EARLY')
  }

  /**
   * 200 OK / answer: CHANNEL_ANSWER while the call state still lags
   * (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt), then ACTIVE.
   */
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
    this.table.fireChannel('CHANNEL_ANSWER', s)
    // switch_channel_perform_mark_answered: every `execute_on_answer*` variable runs as an
    // application (switch_channel_execute_on), before the `api_on_answer*` ones.
    for (const [k, v] of [...s.vars]) if (k.toLowerCase().startsWith('execute_on_answer') && v !== '' && s.up) this.executeOn(s, v)
    if (!s.up) return
    // switch_channel_perform_mark_answered: every `api_on_answer*` variable runs (switch_channel_api_on).
    for (const [k, v] of [...s.vars]) if (k.toLowerCase().startsWith('api_on_answer') && v !== '') this.table.runApiHook(s, v)
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
    this.table.fireChannel('CHANNEL_CALLSTATE', s, [['Original-Channel-Call-State', prev]])
  }

  /**
   * The far end hangs up: BYE when answered
   * (test/fixtures/freeswitch/esl/25-remote-bye-parked-leg.txt: recv_bye, 200), else CANCEL / 487.
   */
  remoteBye(s: Session, cause = 'NORMAL_CLEARING'): void {
    if (!s.up) return
    if (s.answered) this.hangup(s, cause, { disposition: 'recv_bye', sip: { status: 200, phrase: 'OK' } })
    else if (s.direction === 'inbound') this.hangup(s, cause, { disposition: 'recv_cancel' })
    else this.hangup(s, cause, { disposition: 'recv_refuse', sip: { status: 487, phrase: 'Request Terminated' } })
  }

  /**
   * Queues digits as received and fires one DTMF event per digit: from the far end (`RTP`), or
   * queued by `uuid_recv_dtmf` (`APP`: test/fixtures/freeswitch/esl/34-call-commands.txt).
   */
  receiveDtmf(s: Session, digits: string, source: 'RTP' | 'APP' = 'RTP'): void {
    if (!s.up) return
    for (const d of digits) {
      s.dtmfBuffer += d
      this.table.fireChannel('DTMF', s, [
        ['DTMF-Digit', d],
        ['DTMF-Duration', '2000'],
        ['DTMF-Source', source],
      ])
    }
    for (const w of [...s.dtmfWaiters]) w()
  }

  /**
   * switch_ivr_hold / switch_ivr_unhold on an answered leg, with the call states the phone's
   * answer to the re-INVITE brings (test/fixtures/freeswitch/esl/34-call-commands.txt): HELD then
   * CHANNEL_HOLD; UNHELD, CHANNEL_UNHOLD, then ACTIVE. False where FreeSWITCH refuses: a hold of
   * a held call, an unhold of one that is not. The hold music FreeSWITCH plays to the other leg
   * is not modelled.
   */
  hold(s: Session, on: boolean): boolean {
    if (!s.up) return false
    if (on) {
      if (s.callState === 'HELD') return false
      this.setCallState(s, 'HELD')
      this.table.fireChannel('CHANNEL_HOLD', s)
      return true
    }
    if (s.callState !== 'HELD') return false
    this.setCallState(s, 'UNHELD')
    this.table.fireChannel('CHANNEL_UNHOLD', s)
    this.setCallState(s, 'ACTIVE')
    return true
  }

  // ---------------------------------------------------------------- hangup

  /**
   * switch_channel_hangup: CHANNEL_HANGUP now; running applications end (their
   * CHANNEL_EXECUTE_COMPLETE follows, test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt);
   * the bridged leg is told; reporting later.
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
    this.table.fireChannel('CHANNEL_HANGUP', s)
    if (disposition === 'recv_bye') s.setVar('sip_hangup_disposition', 'recv_bye')
    for (const ac of [...s.appAborts]) ac.abort()
    for (const w of [...s.dtmfWaiters]) w()
    if (s.bridge !== undefined) this.bridgedHangup(s)
    for (const h of s.hangupHooks.splice(0)) h(s)
    setImmediate(() => void this.report(s))
  }

  /** CS_REPORTING: CHANNEL_HANGUP_COMPLETE (with the CDR variables), "reported" hooks, then DESTROY. */
  private async report(s: Session): Promise<void> {
    // CS_HANGUP: the media bugs close first (a recording's RECORD_STOP), before this leg waits for
    // its bridged leg (test/fixtures/freeswitch/esl/28-record-session-bridge.txt: A's RECORD_STOP
    // comes after the bridge's EXECUTE_COMPLETE and before A's HANGUP_COMPLETE).
    s.setState('CS_HANGUP', 10)
    for (const bug of s.mediaBugs.splice(0)) await bug.close()
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
    // CS_HANGUP (switch_core_session_hangup_state): hangup_cause and the timestamps are set, then
    // `api_hangup_hook` runs, before CS_REPORTING's CHANNEL_HANGUP_COMPLETE.
    const hook = s.getVar('api_hangup_hook')
    if (hook !== undefined && hook !== '') this.table.runApiHook(s, hook)
    this.table.fireChannel('CHANNEL_HANGUP_COMPLETE', s, [], [['Hangup-Cause', s.hangupCause ?? 'NORMAL_CLEARING']])
    for (const h of s.reportedHooks.splice(0)) h(s)
    setImmediate(() => {
      s.stateNumber = 12
      // A bridged B leg gets its own call uuid back by CHANNEL_DESTROY
      // (test/fixtures/freeswitch/esl/19-originate-xml-default.txt).
      s.callUuid = s.uuid
      s.setVar('call_uuid', s.uuid)
      this.table.fireChannel('CHANNEL_DESTROY', s)
      s.destroyed = true
      this.table.sessions.delete(s.uuid)
      s.resolveDestroyed()
    })
  }
}

/**
 * Variables FreeSWITCH sets once media is negotiated
 * (test/fixtures/freeswitch/esl/06-originate-sofia-contact.txt CHANNEL_ANSWER).
 */
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
