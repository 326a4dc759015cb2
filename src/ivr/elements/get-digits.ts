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
import * as C from '../syntax/checks.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { DIGIT_ATTRIBUTES, DIGITS_VAR, readDigitAttributes, readPrompts, resolveDigitInput, type DigitInput } from './digit-input.js'
import { blankArg, TTS_ENGINE } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementModule } from './types.js'

export type { Prompt } from './digit-input.js'

/** Its prompts, alerts and DTMF attributes are digit-input.ts's (shared with GetInput). */
export interface GetDigits extends ElementBase, DigitInput {
  readonly type: 'GetDigits'
  /** Absent: execution goes on with the next element. */
  readonly action: Param<readonly string[]> | undefined
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GetDigits: GetDigits
  }
}

export const getDigits: ElementModule<GetDigits> = {
  name: 'GetDigits',
  attributes: ['action', ...DIGIT_ATTRIBUTES],
  parse(node, ctx) {
    const children = readPrompts(node, ctx, 'GetDigits', false)
    return { type: 'GetDigits', pos: node.pos, action: ctx.optionalAttr(node, 'action', C.urlList), ...readDigitAttributes(node, ctx), ...children }
  },
  async run(el, ctx) {
    const action = ctx.optional(el.action)
    if (!action.ok) return action.error
    const resolved = await resolveDigitInput(el, ctx)
    if (!resolved.ok) return resolved.error
    const { timeoutS, interdigitS, finishOnKey, numDigits, validDigits, maxTries, prompts, say, alerts } = resolved.value

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    if (say !== undefined) {
      for (const v of [`tts_engine=${TTS_ENGINE}`, `tts_voice=${say.voice}`]) {
        const set = await ctx.exec(app('set', v), EXEC_TIMEOUT_MS.short)
        if (!set.ok) return set.error
      }
    }
    const prompt = say?.file ?? prompts
    const arg = [
      '1',
      String(numDigits),
      '1',
      String(timeoutS * 1000),
      finishOnKey === '' ? 'none' : finishOnKey,
      blankArg(prompt ?? 'silence'),
      'silence_stream://1',
      DIGITS_VAR,
      '.',
      String(interdigitS * 1000),
    ].join(' ')

    for (let attempt = 1; attempt <= maxTries; attempt++) {
      const done = await ctx.exec(app('play_and_get_digits', arg), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
      const input = done.value[`variable_${DIGITS_VAR}`] ?? ''
      if (input === '') continue
      if ([...input].every((k) => validDigits.includes(k))) {
        ctx.setDigits(input)
        return action.value === undefined ? NEXT : ctx.loadDocument(action.value, 'POST')
      }
      ctx.log.debug({ attempt, invalid: input }, 'ivr GetDigits: invalid input')
      if (alerts !== undefined) {
        const alerted = await ctx.exec(app('playback', alerts), EXEC_TIMEOUT_MS.media)
        if (!alerted.ok) return alerted.error
      }
    }
    ctx.setDigits('')
    return NEXT
  },
}
