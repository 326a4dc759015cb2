/**
 * The CDR variables FreeSWITCH sets when a channel reaches CS_REPORTING, just before
 * CHANNEL_HANGUP_COMPLETE carries them: the stamps, epochs and durations of switch_channel.c
 * switch_channel_set_timestamps, computed from the channel's time table.
 */
import { causeQ850 } from '../model/causes.js'
import { localStamp } from '../model/events.js'
import type { Session } from '../model/session.js'

/**
 * The CDR variables of CHANNEL_HANGUP_COMPLETE (test/fixtures/freeswitch/esl/11-busy-486.txt:
 * hangup_cause, *_epoch, duration, billsec...).
 */
export function cdrVars(s: Session, endMicros: number): Array<[string, string]> {
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
