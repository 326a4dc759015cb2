/**
 * `<GetDigits>`: prompts, then DTMF collected by FreeSWITCH with mod_dptools
 * `play_and_get_digits`, one try per run so that the tries, the alerts and the valid digits
 * follow the IVR language exactly:
 *
 *   play_and_get_digits 1 <numDigits> 1 <timeout ms> <finishOnKey|none> <prompts> silence_stream://1
 *                       cod_ivr_digits . <interdigitTimeout ms>
 *
 * How FreeSWITCH reads that (switch_ivr_play_say.c switch_play_and_get_digits / switch_ivr_read):
 * - the prompts are played with DTMF collection on, so a key stops them and counts;
 * - collection ends at numDigits keys, at the finish key (which is not kept: it goes to
 *   `read_terminator_used`), or after `timeout` (first key) / `interdigitTimeout` (next keys);
 * - the variable is cleared first and set only to a non-empty input, so a stale value cannot
 *   be read; the regular expression `.` accepts any input, so FreeSWITCH never judges it and
 *   never plays its own "bad input" file (1 ms of silence stands in for it);
 * - an empty terminator list means `#` to play_and_get_digits_function, so "no finish key" is
 *   written `none` (no DTMF key is n, o or e).
 *
 * Here: no input → next try; input with a key outside validDigits → the alert prompts
 * (children with purpose="alert"), then the next try; valid input → `Digits`, and with
 * `action` the document at that URL (POST with Digits) replaces this one. After maxTries
 * without valid input, Digits is '' and the next element runs.
 */
import { app } from '../../pbx/commands.js'
import type { GetDigits } from '../document/types.js'
import { BEEP, blankArg, promptsFile, sayPrompt, TTS_ENGINE } from './media.js'
import { ok } from '../../util/result.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementModule } from './types.js'

/** The channel variable play_and_get_digits writes the input to. */
export const DIGITS_VAR = 'cod_ivr_digits'

export const getDigits: ElementModule<GetDigits> = {
  name: 'GetDigits',
  async run(el, ctx) {
    const action = ctx.optional(el.action)
    if (!action.ok) return action.error
    const timeout = ctx.value(el.timeout)
    if (!timeout.ok) return timeout.error
    const interdigit = ctx.value(el.interdigitTimeout)
    if (!interdigit.ok) return interdigit.error
    const finishOnKey = ctx.value(el.finishOnKey)
    if (!finishOnKey.ok) return finishOnKey.error
    const numDigits = ctx.value(el.numDigits)
    if (!numDigits.ok) return numDigits.error
    const validDigits = ctx.value(el.validDigits)
    if (!validDigits.ok) return validDigits.error
    const maxTries = ctx.value(el.maxTries)
    if (!maxTries.ok) return maxTries.error
    const beep = ctx.value(el.playBeep)
    if (!beep.ok) return beep.error
    const prompts = promptsFile(el.prompts, ctx, beep.value ? [BEEP] : [])
    if (!prompts.ok) return prompts.error
    const say = beep.value ? ok(undefined) : sayPrompt(el.prompts, ctx)
    if (!say.ok) return say.error
    const alerts = promptsFile(el.alerts, ctx)
    if (!alerts.ok) return alerts.error
    const allowed = await ctx.checkMedia([prompts.value, alerts.value])
    if (!allowed.ok) return allowed.error

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    if (say.value !== undefined) {
      for (const v of [`tts_engine=${TTS_ENGINE}`, `tts_voice=${say.value.voice}`]) {
        const set = await ctx.exec(app('set', v), EXEC_TIMEOUT_MS.short)
        if (!set.ok) return set.error
      }
    }
    const prompt = say.value?.file ?? prompts.value
    const arg = [
      '1',
      String(numDigits.value),
      '1',
      String(timeout.value * 1000),
      finishOnKey.value === '' ? 'none' : finishOnKey.value,
      blankArg(prompt ?? 'silence'),
      'silence_stream://1',
      DIGITS_VAR,
      '.',
      String(interdigit.value * 1000),
    ].join(' ')

    for (let attempt = 1; attempt <= maxTries.value; attempt++) {
      const done = await ctx.exec(app('play_and_get_digits', arg), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
      const input = done.value[`variable_${DIGITS_VAR}`] ?? ''
      if (input === '') continue
      if ([...input].every((k) => validDigits.value.includes(k))) {
        ctx.setDigits(input)
        return action.value === undefined ? NEXT : ctx.loadDocument(action.value, 'POST')
      }
      ctx.log.debug({ attempt, invalid: input }, 'ivr GetDigits: invalid input')
      if (alerts.value !== undefined) {
        const alerted = await ctx.exec(app('playback', alerts.value), EXEC_TIMEOUT_MS.media)
        if (!alerted.ok) return alerted.error
      }
    }
    ctx.setDigits('')
    return NEXT
  },
}
