/**
 * Dialplan applications the simulator runs (mod_dptools.c names and argument forms), as the
 * table the composition root registers into the core. Media applications take simulated time
 * (PROMPT_SEC per prompt, scaled) and end early on hangup; every run is recorded
 * (Simulator.executedApps). Applications not listed here make FreeSWITCH hang the channel up
 * with DESTINATION_OUT_OF_ORDER ("Invalid Application").
 */
import type { AppTable } from '../core/switch.js'
import { str2cause } from '../model/causes.js'
import { untilAborted } from '../model/clock.js'
import { separateString } from '../text/fs-strings.js'
import { bridgeApp } from './bridge.js'
import { playAndGetDigits } from './digits.js'
import { playAndDetectSpeech, recordApp } from './ivr-input.js'
import { recordSession } from './record-session.js'
import { rxfax, txfax } from './fax.js'
import { PROMPT_SEC, wait } from './media.js'
import { exportVar, multiset, setVar } from './variables.js'

export const APPS: AppTable = {
  answer: (sw, s) => sw.answer(s),
  pre_answer: (sw, s) => sw.preAnswer(s),
  ring_ready: (sw, s) => sw.progress(s),
  park: (sw, s, _arg, signal) => sw.park(s, signal),
  hangup: (sw, s, arg) => sw.hangup(s, str2cause(arg.trim())),
  bridge: (sw, s, arg, signal) => bridgeApp(sw, s, arg, signal),
  transfer: (sw, s, arg) => {
    const [dest, dp, ctx] = separateString(arg, ' ')
    if (dest !== undefined && dest !== '') sw.transfer(s, dest, dp, ctx)
  },
  set: (_sw, s, arg) => setVar(s, arg),
  export: (_sw, s, arg) => exportVar(s, arg),
  unset: (_sw, s, arg) => s.setVar(arg.trim(), undefined),
  multiset: (_sw, s, arg) => multiset(s, arg),
  log: () => undefined,
  info: () => undefined,
  event: () => undefined,
  set_zombie_exec: () => undefined,
  sleep: async (sw, _s, arg, signal) => {
    await wait(sw, (parseInt(arg, 10) || 0) / 1000, signal)
  },
  playback: async (sw, _s, _arg, signal) => {
    await wait(sw, PROMPT_SEC, signal)
  },
  speak: async (sw, _s, _arg, signal) => {
    await wait(sw, PROMPT_SEC, signal)
  },
  gentones: async (sw, _s, _arg, signal) => {
    await wait(sw, PROMPT_SEC, signal)
  },
  endless_playback: (_sw, _s, _arg, signal) => untilAborted(signal),
  echo: (_sw, _s, _arg, signal) => untilAborted(signal),
  play_and_get_digits: playAndGetDigits,
  // The IVR's Record and GetInput (test/fixtures/freeswitch/esl/40-42).
  record: recordApp,
  play_and_detect_speech: playAndDetectSpeech,
  record_session: (sw, s, arg) => recordSession(sw, s, arg),
  // mod_spandsp's fax applications (fax.ts; test/fixtures/freeswitch/esl/45-47).
  txfax,
  rxfax,
  /**
   * send_dtmf <digits>: sends the digits to the channel's far end (mod_dptools.c
   * send_dtmf_function, switch_core_session_send_dtmf_string). FreeSWITCH fires no event for
   * digits it sends (DTMF events are for digits received), and the simulated far ends ignore
   * them: nothing to do but be a known application
   * (test/fixtures/freeswitch/esl/33-time-limit-send-digits.txt).
   */
  send_dtmf: () => undefined,
  /**
   * sched_hangup [+]<seconds> [cause]: `+` is relative, else an epoch time; the cause is
   * ALLOTTED_TIMEOUT when none is given (mod_dptools.c sched_hangup_function). FreeSWITCH counts
   * whole epoch seconds (its hangup comes between n-1 and n s after: 33-time-limit-send-digits.txt
   * saw 2.5 s for +3); the simulator waits the n seconds.
   */
  sched_hangup: (sw, s, arg) => {
    const [when, cause] = separateString(arg, ' ')
    if (when === undefined || when === '') return
    const seconds = when.startsWith('+') ? parseInt(when.slice(1), 10) : parseInt(when, 10) - Math.floor(Date.now() / 1000)
    if (!Number.isFinite(seconds)) return
    const why = cause === undefined || cause === '' ? 'ALLOTTED_TIMEOUT' : str2cause(cause)
    s.scheduled.push(sw.clock.after(Math.max(0, seconds), () => sw.hangup(s, why)))
  },
}
