/**
 * `<GetInput>`: GetDigits (get-digits.ts) that also listens for speech. The prompts play while
 * FreeSWITCH's `play_and_detect_speech` listens with the ASR engine of daemon.yaml `ivr.asr`:
 *
 *   play_and_detect_speech <prompts> detect:<engine> {<ivr.asr.params>,start-input-timers=false,
 *       no-input-timeout=<timeout ms>,speech-timeout=<speechTimeout ms>,speech-language=<language>
 *       [,profanity-filter=true|false][,speech-hints=<a;b>]}<ivr.asr.grammar>
 *
 * What FreeSWITCH 1.10.12 does with it (mod_dptools.c play_and_detect_speech_function,
 * switch_ivr_async.c switch_ivr_play_and_detect_speech; test/fixtures/freeswitch/esl/41, 42):
 * - the result is `detect_speech_result` (speech-result.ts reads every form), which the
 *   application clears when it starts; `playback_terminator_used` stays on the channel, so it is
 *   unset before each try;
 * - the prompt is everything before the first `detect:` of the argument: a prompt holding that
 *   text (a Speak) would be cut there, so it is a runtime error;
 * - keys do nothing unless they are in `playback_terminators`: with `any`, the first key ends it
 *   at once (`DIGIT: <key>`, `playback_terminator_used`), and the rest of the number is
 *   collected with play_and_get_digits (silence for a prompt) as GetDigits collects it;
 * - the ASR handle stays open on the channel between runs (a later `detect:<other>` still used the
 *   first engine, esl/41) unless `play_and_detect_speech_close_asr=true`, which is set first;
 * - `start-input-timers=false`: the no-input timer starts when the prompts end.
 *
 * Then as GetDigits: no input → the next try; keys outside validDigits → the alerts, then the
 * next try; a result → its parameters, and `action` (URLs or a Section, action.ts). Posted and
 * set: InputType (`dtmf` or `speech`), Digits, Speech (the transcript), Confidence (0-1; '' for
 * keys). After maxTries without a result every one of them is '' and the next element runs.
 *
 * Without `ivr.asr.engine` a GetInput is a runtime error that names the setting.
 */
import { app } from '../../pbx/commands.js'
import { ok } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import type { AsrSettings } from '../recordings.js'
import { follow, readAction, type ElementAction } from './action.js'
import { DIGIT_ATTRIBUTES, DIGITS_VAR, readDigitAttributes, readPrompts, resolveDigitInput, type DigitInput } from './digit-input.js'
import { TTS_ENGINE } from './media.js'
import { readSpeechResult } from './speech-result.js'
import { EXEC_TIMEOUT_MS, NEXT, runtimeError, type ElementModule } from './types.js'

/** GetDigits's prompts, alerts and DTMF attributes (digit-input.ts; `timeout`: seconds to wait for input once the prompts ended), and the speech attributes. */
export interface GetInput extends ElementBase, DigitInput {
  readonly type: 'GetInput'
  readonly action: Param<ElementAction> | undefined
  /** BCP 47 tag, default ja-JP. */
  readonly language: Param<string>
  /** Seconds of speech at most, 1-60, default 5. */
  readonly speechTimeout: Param<number>
  /** Absent: the engine's default. */
  readonly profanityFilter: Param<boolean> | undefined
  /** Expected phrases; [] when absent. */
  readonly hints: Param<readonly string[]>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GetInput: GetInput
  }
}

const SPEECH_TIMEOUT = C.intIn(1, 60)

const LANGUAGE_RULE = 'a BCP 47 language tag such as en-US or ja-JP'
const LANGUAGE: ValueCheck<string> = {
  rule: LANGUAGE_RULE,
  convert: (raw) => {
    const s = raw.trim()
    return /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/.test(s) ? ok(s) : { ok: false, error: `must be ${LANGUAGE_RULE}` }
  },
}

/**
 * Phrases go inside the engine's `{name=value,...}` parameters, where `,` `{` `}` separate and
 * `'` quotes (switch_event_create_brackets): letters, digits, spaces and `. -` only.
 */
const HINTS_RULE = 'a comma list of up to 50 phrases, each 1-100 letters, digits, spaces, . or -'
const HINT_RE = /^[\p{L}\p{N}][\p{L}\p{N} .-]{0,99}$/u
const HINTS: ValueCheck<readonly string[]> = {
  rule: HINTS_RULE,
  convert: (raw) => {
    const phrases = raw.split(',').map((p) => p.trim())
    if (raw.trim() === '') return ok([])
    if (phrases.length > 50 || !phrases.every((p) => HINT_RE.test(p))) return { ok: false, error: `must be ${HINTS_RULE}` }
    return ok(phrases)
  },
}

/** The argument of play_and_detect_speech after the prompt file. */
function detectArgument(asr: AsrSettings, o: { timeoutS: number; speechTimeoutS: number; language: string; profanityFilter: boolean | undefined; hints: readonly string[] }): string {
  const params: string[] = Object.entries(asr.params).map(([k, v]) => `${k}=${v}`)
  params.push('start-input-timers=false', `no-input-timeout=${o.timeoutS * 1000}`, `speech-timeout=${o.speechTimeoutS * 1000}`, `speech-language=${o.language}`)
  if (o.profanityFilter !== undefined) params.push(`profanity-filter=${o.profanityFilter}`)
  if (o.hints.length > 0) params.push(`speech-hints=${o.hints.join(';')}`)
  return `detect:${asr.engine} {${params.join(',')}}${asr.grammar}`
}

const MISSING_ENGINE = 'GetInput: no speech recognition engine is configured: set ivr.asr.engine in daemon.yaml (e.g. unimrcp:<profile>, or test for mod_test)'

export const getInput: ElementModule<GetInput> = {
  name: 'GetInput',
  attributes: ['action', ...DIGIT_ATTRIBUTES, 'language', 'speechTimeout', 'profanityFilter', 'hints'],
  parse(node, ctx) {
    const children = readPrompts(node, ctx, 'GetInput', true)
    return {
      type: 'GetInput',
      pos: node.pos,
      action: readAction(node, ctx, 'GetInput'),
      ...readDigitAttributes(node, ctx),
      language: ctx.attr(node, 'language', LANGUAGE, 'ja-JP'),
      speechTimeout: ctx.attr(node, 'speechTimeout', SPEECH_TIMEOUT, 5),
      profanityFilter: ctx.optionalAttr(node, 'profanityFilter', C.bool),
      hints: ctx.attr(node, 'hints', HINTS, []),
      ...children,
    }
  },
  async run(el, ctx) {
    const asr = ctx.asr
    if (asr === undefined) return runtimeError(MISSING_ENGINE)
    const action = ctx.optional(el.action)
    if (!action.ok) return action.error
    const resolved = await resolveDigitInput(el, ctx)
    if (!resolved.ok) return resolved.error
    const { timeoutS, interdigitS, finishOnKey, numDigits, validDigits, maxTries, prompts, say, alerts } = resolved.value
    const language = ctx.value(el.language)
    if (!language.ok) return language.error
    const speechTimeout = ctx.value(el.speechTimeout)
    if (!speechTimeout.ok) return speechTimeout.error
    const profanityFilter = ctx.optional(el.profanityFilter)
    if (!profanityFilter.ok) return profanityFilter.error
    const hints = ctx.value(el.hints)
    if (!hints.ok) return hints.error

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    const setup = ['play_and_detect_speech_close_asr=true', 'playback_terminators=any']
    if (say !== undefined) setup.push(`tts_engine=${TTS_ENGINE}`, `tts_voice=${say.voice}`)
    for (const v of setup) {
      const set = await ctx.exec(app('set', v), EXEC_TIMEOUT_MS.short)
      if (!set.ok) return set.error
    }
    const prompt = say?.file ?? prompts ?? 'silence_stream://1'
    if (prompt.includes('detect:')) return runtimeError('GetInput: a prompt may not contain the text "detect:" (FreeSWITCH would cut the prompt there)')
    const detect = `${prompt} ${detectArgument(asr, { timeoutS, speechTimeoutS: speechTimeout.value, language: language.value, profanityFilter: profanityFilter.value, hints: hints.value })}`
    const rest = [
      '1',
      String(Math.max(1, numDigits - 1)),
      '1',
      String(interdigitS * 1000),
      finishOnKey === '' ? 'none' : finishOnKey,
      'silence_stream://1',
      'silence_stream://1',
      DIGITS_VAR,
      '.',
      String(interdigitS * 1000),
    ].join(' ')

    for (let attempt = 1; attempt <= maxTries; attempt++) {
      const unset = await ctx.exec(app('unset', 'playback_terminator_used'), EXEC_TIMEOUT_MS.short)
      if (!unset.ok) return unset.error
      const done = await ctx.exec(app('play_and_detect_speech', detect), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
      const result = readSpeechResult(done.value['variable_detect_speech_result'])
      const key = result.kind === 'dtmf' ? result.key : (done.value['variable_playback_terminator_used'] ?? '')
      if (key !== '') {
        let input = key === finishOnKey ? '' : key
        if (input !== '' && numDigits > 1) {
          const more = await ctx.exec(app('play_and_get_digits', rest), EXEC_TIMEOUT_MS.media)
          if (!more.ok) return more.error
          input += more.value[`variable_${DIGITS_VAR}`] ?? ''
        }
        if (input === '') continue
        if ([...input].every((k) => validDigits.includes(k))) {
          ctx.setDigits(input)
          ctx.setResults({ InputType: 'dtmf', Speech: '', Confidence: '' })
          return follow(action.value, ctx, 'GetInput')
        }
        ctx.log.debug({ attempt, invalid: input }, 'ivr GetInput: invalid input')
        if (alerts !== undefined) {
          const alerted = await ctx.exec(app('playback', alerts), EXEC_TIMEOUT_MS.media)
          if (!alerted.ok) return alerted.error
        }
        continue
      }
      if (result.kind === 'speech') {
        ctx.setDigits('')
        ctx.setResults({ InputType: 'speech', Speech: result.text, Confidence: String(result.confidence) })
        return follow(action.value, ctx, 'GetInput')
      }
      ctx.log.debug({ attempt, why: result.kind === 'none' ? result.why : '' }, 'ivr GetInput: no input')
    }
    ctx.setDigits('')
    ctx.setResults({ InputType: '', Speech: '', Confidence: '' })
    return NEXT
  },
}
