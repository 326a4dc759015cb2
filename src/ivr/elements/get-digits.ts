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
import { ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import { quote } from '../syntax/params.js'
import { fail, positionOf } from '../syntax/reader.js'
import type { ElementBase, Param } from '../syntax/types.js'
import { BEEP, blankArg, fileString, fliteVoice, promptText, TTS_ENGINE } from './media.js'
import { play, type Play } from './play.js'
import { speak, type Speak } from './speak.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementContext, type ElementModule, type Outcome } from './types.js'
import { wait, type Wait } from './wait.js'

/** What GetDigits plays: Play, Speak and Wait children. */
export type Prompt = Play | Speak | Wait

export interface GetDigits extends ElementBase {
  readonly type: 'GetDigits'
  /** Absent: execution goes on with the next element. */
  readonly action: Param<readonly string[]> | undefined
  /** Seconds to wait for the first key, 1-300, default 5. */
  readonly timeout: Param<number>
  /** Seconds between keys, 1-300, default 5. */
  readonly interdigitTimeout: Param<number>
  /** One key, or '' for none; default '#'. */
  readonly finishOnKey: Param<string>
  /** 1-99, default 99. */
  readonly numDigits: Param<number>
  /** Default '0123456789*#'. */
  readonly validDigits: Param<string>
  /** 1-10, default 1. */
  readonly maxTries: Param<number>
  /** Default false. */
  readonly playBeep: Param<boolean>
  /** Children without `purpose`, in document order: played to ask for input. */
  readonly prompts: readonly Prompt[]
  /** Children with `purpose="alert"`, in document order: played after invalid input. */
  readonly alerts: readonly Prompt[]
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GetDigits: GetDigits
  }
}

/** The channel variable play_and_get_digits writes the input to. */
const DIGITS_VAR = 'cod_ivr_digits'

const TIMEOUT = C.intIn(1, 300)
const NUM_DIGITS = C.intIn(1, 99)
const MAX_TRIES = C.intIn(1, 10)
const FINISH_ON_KEY = C.dtmfKeys(0, 1)
const VALID_DIGITS = C.dtmfKeys(1, 16)

const PROMPTS = [play, speak, wait] as const

function promptFiles(p: Prompt, ctx: ElementContext): Result<string[], Outcome> {
  switch (p.type) {
    case 'Play':
      return play.files(p, ctx)
    case 'Speak':
      return speak.files(p, ctx)
    case 'Wait':
      return wait.files(p, ctx)
  }
}

/**
 * A GetDigits prompt that is one Speak, spoken on FreeSWITCH 1.10.12: that release has no
 * `tts://` file format ("[ERR] switch_core_file.c Invalid file format [tts]", seen by the
 * real-FreeSWITCH lane: play_and_get_digits failed and the IVR ended the call), but
 * switch_ivr_play_file speaks a `say:<text>` file with the channel's `tts_engine` and
 * `tts_voice` (switch_ivr_play_say.c), DTMF stopping it as for any prompt. `say:` cannot stand
 * inside a `file_string://`, so prompts of several items keep `tts://` (still unplayable on
 * 1.10.12: docs/ivr.md, GetDigits). Undefined when the prompts are not exactly one Speak played once.
 */
function sayPrompt(prompts: readonly Prompt[], ctx: ElementContext): Result<{ file: string; voice: string } | undefined, Outcome> {
  const [only] = prompts
  if (prompts.length !== 1 || only === undefined || only.type !== 'Speak') return ok(undefined)
  const loop = ctx.value(only.loop)
  if (!loop.ok) return loop
  if (loop.value !== 1) return ok(undefined)
  const text = ctx.value(only.text)
  if (!text.ok) return text
  const language = ctx.value(only.language)
  if (!language.ok) return language
  const voice = ctx.optional(only.voice)
  if (!voice.ok) return voice
  const t = promptText(text.value)
  return ok(t === '' ? undefined : { file: `say:${t}`, voice: fliteVoice(language.value, voice.value) })
}

/** The prompts of a GetDigits as one file (undefined: nothing to play). */
function promptsFile(prompts: readonly Prompt[], ctx: ElementContext, extra: readonly string[] = []): Result<string | undefined, Outcome> {
  const items: string[] = []
  for (const p of prompts) {
    const files = promptFiles(p, ctx)
    if (!files.ok) return files
    items.push(...files.value)
  }
  items.push(...extra)
  return ok(fileString(items))
}

export const getDigits: ElementModule<GetDigits> = {
  name: 'GetDigits',
  attributes: ['action', 'timeout', 'interdigitTimeout', 'finishOnKey', 'numDigits', 'validDigits', 'maxTries', 'playBeep'],
  parse(node, ctx) {
    const prompts: Prompt[] = []
    const alerts: Prompt[] = []
    for (const c of ctx.children(node, '<GetDigits>')) {
      const prompt = PROMPTS.find((m) => m.name === c.el.name)
      if (prompt === undefined) {
        ctx.refuseUnknown(c)
        return fail(positionOf(c), `<GetDigits> may contain only <Play>, <Speak> and <Wait>, found <${c.el.name}>`)
      }
      const child = ctx.enter(node, c, [...prompt.attributes, 'purpose'])
      const purpose = child.attrs.get('purpose')
      if (purpose !== undefined && purpose !== 'alert') {
        fail(child.pos, `${c.el.name} purpose ${quote(purpose)}: must be alert (or absent for a prompt)`)
      }
      ;(purpose === 'alert' ? alerts : prompts).push(prompt.parse(child, ctx))
    }
    return {
      type: 'GetDigits',
      pos: node.pos,
      action: ctx.optionalAttr(node, 'action', C.urlList),
      timeout: ctx.attr(node, 'timeout', TIMEOUT, 5),
      interdigitTimeout: ctx.attr(node, 'interdigitTimeout', TIMEOUT, 5),
      finishOnKey: ctx.attr(node, 'finishOnKey', FINISH_ON_KEY, '#'),
      numDigits: ctx.attr(node, 'numDigits', NUM_DIGITS, 99),
      validDigits: ctx.attr(node, 'validDigits', VALID_DIGITS, '0123456789*#'),
      maxTries: ctx.attr(node, 'maxTries', MAX_TRIES, 1),
      playBeep: ctx.attr(node, 'playBeep', C.bool, false),
      prompts,
      alerts,
    }
  },
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
