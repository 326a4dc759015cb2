/**
 * `<Record action maxLength timeout finishOnKey playBeep/>`: records what the caller says into
 * the daemon's recording store (src/recording/: the same folder, retention, ids and API as call
 * recordings), with mod_dptools `record`:
 *
 *   record <path> <maxLength s> <SILENCE_THRESHOLD> <timeout s>
 *
 * How FreeSWITCH 1.10.12 runs it (switch_ivr_play_say.c switch_ivr_record_file; captured in
 * test/fixtures/freeswitch/esl/40-record-app.txt):
 * - it records the audio the channel receives, ends after `timeout` seconds below the energy
 *   threshold (the silence is not kept: a 2 s tone then silence gives record_ms 2000), after
 *   `maxLength` seconds, at a key of the channel variable `playback_terminators`, or at the
 *   hangup; RECORD_START and RECORD_STOP fire around it;
 * - its CHANNEL_EXECUTE_COMPLETE carries `record_ms` (and record_seconds, record_samples,
 *   record_file_size) and, when a key ended it, `playback_terminator_used` — which stays on the
 *   channel, so it is unset before each Record;
 * - nothing heard at all: a 44-byte file (the WAV header) and record_ms 0.
 *
 * Posted to `action` (and set as variables): RecordingId, RecordingUrl (the API path of its
 * audio), RecordingDuration (whole seconds, rounded up: any audio is at least 1) and Digits (the
 * key that ended it, or ''). A recording with no audio is not kept (its record is removed):
 * RecordingDuration=0 and RecordingId/RecordingUrl empty. A caller who hangs up while recording
 * still leaves a completed recording (its length read from the file), but no action runs.
 */
import { app } from '../../pbx/commands.js'
import * as C from '../syntax/checks.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { follow, readAction, type ElementAction } from './action.js'
import { BEEP } from './media.js'
import { EXEC_TIMEOUT_MS, GONE, type ElementModule } from './types.js'

export interface RecordElement extends ElementBase {
  readonly type: 'Record'
  /** Absent: execution goes on with the next element. */
  readonly action: Param<ElementAction> | undefined
  /** Seconds, 1-3600, default 60. */
  readonly maxLength: Param<number>
  /** Seconds of silence that end it, 1-60, default 5. */
  readonly timeout: Param<number>
  /** One key, or '' for none; default '#'. */
  readonly finishOnKey: Param<string>
  /** Default true. */
  readonly playBeep: Param<boolean>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Record: RecordElement
  }
}

const MAX_LENGTH = C.intIn(1, 3600)
const TIMEOUT = C.intIn(1, 60)
const FINISH_ON_KEY = C.dtmfKeys(0, 1)

/**
 * The energy below which a frame counts as silence: 200, the threshold of FreeSWITCH's own
 * voicemail (mod_voicemail.c `record-silence-threshold` default) and of the dptools examples.
 */
const SILENCE_THRESHOLD = 200

/** Whole seconds, rounded up: a recording with any audio lasts at least 1 s. */
const durationSeconds = (ms: number): number => (ms <= 0 ? 0 : Math.ceil(ms / 1000))

/** FreeSWITCH's `record_ms` on the completion; undefined when absent or not a count. */
function recordMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,12}$/.test(value)) return undefined
  return Number(value)
}

export const record: ElementModule<RecordElement> = {
  name: 'Record',
  attributes: ['action', 'maxLength', 'timeout', 'finishOnKey', 'playBeep'],
  parse(node, ctx) {
    ctx.empty(node)
    return {
      type: 'Record',
      pos: node.pos,
      action: readAction(node, ctx, 'Record'),
      maxLength: ctx.attr(node, 'maxLength', MAX_LENGTH, 60),
      timeout: ctx.attr(node, 'timeout', TIMEOUT, 5),
      finishOnKey: ctx.attr(node, 'finishOnKey', FINISH_ON_KEY, '#'),
      playBeep: ctx.attr(node, 'playBeep', C.bool, true),
    }
  },
  async run(el, ctx) {
    const action = ctx.optional(el.action)
    if (!action.ok) return action.error
    const maxLength = ctx.value(el.maxLength)
    if (!maxLength.ok) return maxLength.error
    const timeout = ctx.value(el.timeout)
    if (!timeout.ok) return timeout.error
    const finishOnKey = ctx.value(el.finishOnKey)
    if (!finishOnKey.ok) return finishOnKey.error
    const beep = ctx.value(el.playBeep)
    if (!beep.ok) return beep.error

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    // `none`: FreeSWITCH's default terminator is `*` when the variable is unset (play.ts).
    const set = await ctx.exec(app('set', `playback_terminators=${finishOnKey.value === '' ? 'none' : finishOnKey.value}`), EXEC_TIMEOUT_MS.short)
    if (!set.ok) return set.error
    if (beep.value) {
      const beeped = await ctx.exec(app('playback', BEEP), EXEC_TIMEOUT_MS.media)
      if (!beeped.ok) return beeped.error
    }
    // After the beep: a key that stopped the beep is not the key that ended the recording.
    const unset = await ctx.exec(app('unset', 'playback_terminator_used'), EXEC_TIMEOUT_MS.short)
    if (!unset.ok) return unset.error
    const target = await ctx.beginRecording()
    if (!target.ok) return target.error
    const { id, path, url } = target.value
    const done = await ctx.exec(app('record', `${path} ${maxLength.value} ${SILENCE_THRESHOLD} ${timeout.value}`), EXEC_TIMEOUT_MS.media)
    if (!done.ok) {
      // The file FreeSWITCH wrote until the hangup is kept; an error leaves what it holds too.
      await ctx.endRecording(id, undefined)
      return done.error
    }
    const keptMs = await ctx.endRecording(id, recordMs(done.value['variable_record_ms']))
    const key = done.value['variable_playback_terminator_used'] ?? ''
    ctx.setDigits(finishOnKey.value !== '' && key === finishOnKey.value ? key : '')
    ctx.setResults({
      RecordingId: keptMs > 0 ? id : '',
      RecordingUrl: keptMs > 0 ? url : '',
      RecordingDuration: String(durationSeconds(keptMs)),
    })
    ctx.log.info({ recordingId: keptMs > 0 ? id : undefined, ms: keptMs }, 'ivr Record: done')
    if (ctx.signal.aborted) return GONE
    return follow(action.value, ctx, 'Record')
  },
}
