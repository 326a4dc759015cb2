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
import { ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import { quote } from '../syntax/params.js'
import { fail, positionOf } from '../syntax/reader.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import type { AsrSettings } from '../recordings.js'
import { follow, readAction, type ElementAction } from './action.js'
import type { Prompt } from './get-digits.js'
import { BEEP, fileString, fliteVoice, promptText, TTS_ENGINE } from './media.js'
import { play } from './play.js'
import { readSpeechResult } from './speech-result.js'
import { speak } from './speak.js'
import { EXEC_TIMEOUT_MS, NEXT, runtimeError, type ElementContext, type ElementModule, type Outcome } from './types.js'
import { wait } from './wait.js'

export interface GetInput extends ElementBase {
  readonly type: 'GetInput'
  readonly action: Param<ElementAction> | undefined
  /** Seconds to wait for input once the prompts ended, 1-300, default 5. */
  readonly timeout: Param<number>
  readonly interdigitTimeout: Param<number>
  readonly finishOnKey: Param<string>
  readonly numDigits: Param<number>
  readonly validDigits: Param<string>
  readonly maxTries: Param<number>
  readonly playBeep: Param<boolean>
  /** BCP 47 tag, default ja-JP. */
  readonly language: Param<string>
  /** Seconds of speech at most, 1-60, default 5. */
  readonly speechTimeout: Param<number>
  /** Absent: the engine's default. */
  readonly profanityFilter: Param<boolean> | undefined
  /** Expected phrases; [] when absent. */
  readonly hints: Param<readonly string[]>
  readonly prompts: readonly Prompt[]
  readonly alerts: readonly Prompt[]
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    GetInput: GetInput
  }
}

const DIGITS_VAR = 'cod_ivr_digits'
const TIMEOUT = C.intIn(1, 300)
const SPEECH_TIMEOUT = C.intIn(1, 60)
const NUM_DIGITS = C.intIn(1, 99)
const MAX_TRIES = C.intIn(1, 10)
const FINISH_ON_KEY = C.dtmfKeys(0, 1)
const VALID_DIGITS = C.dtmfKeys(1, 16)

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

function promptsFile(prompts: readonly Prompt[], ctx: ElementContext, extra: readonly string[] = []): Result<string | undefined, Outcome> {
  const items: string[] = []
  for (const p of prompts) {
    const files = promptFiles(p, ctx)
    if (!files.ok) return files
    items.push(...files.value)
  }
  return ok(fileString([...items, ...extra]))
}

/** One Speak played once: spoken as `say:` (1.10.12 has no tts:// format; get-digits.ts sayPrompt says why). */
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
  attributes: [
    'action',
    'timeout',
    'interdigitTimeout',
    'finishOnKey',
    'numDigits',
    'validDigits',
    'maxTries',
    'playBeep',
    'language',
    'speechTimeout',
    'profanityFilter',
    'hints',
  ],
  parse(node, ctx) {
    const prompts: Prompt[] = []
    const alerts: Prompt[] = []
    for (const c of ctx.children(node, '<GetInput>')) {
      const prompt = PROMPTS.find((m) => m.name === c.el.name)
      if (prompt === undefined) {
        ctx.refuseUnknown(c)
        return fail(positionOf(c), `<GetInput> may contain only <Play>, <Speak> and <Wait>, found <${c.el.name}>`)
      }
      const child = ctx.enter(node, c, [...prompt.attributes, 'purpose'])
      const purpose = child.attrs.get('purpose')
      if (purpose !== undefined && purpose !== 'alert' && purpose !== 'prompt') {
        fail(child.pos, `${c.el.name} purpose ${quote(purpose)}: must be prompt or alert (absent: prompt)`)
      }
      ;(purpose === 'alert' ? alerts : prompts).push(prompt.parse(child, ctx))
    }
    return {
      type: 'GetInput',
      pos: node.pos,
      action: readAction(node, ctx, 'GetInput'),
      timeout: ctx.attr(node, 'timeout', TIMEOUT, 5),
      interdigitTimeout: ctx.attr(node, 'interdigitTimeout', TIMEOUT, 5),
      finishOnKey: ctx.attr(node, 'finishOnKey', FINISH_ON_KEY, '#'),
      numDigits: ctx.attr(node, 'numDigits', NUM_DIGITS, 99),
      validDigits: ctx.attr(node, 'validDigits', VALID_DIGITS, '0123456789*#'),
      maxTries: ctx.attr(node, 'maxTries', MAX_TRIES, 1),
      playBeep: ctx.attr(node, 'playBeep', C.bool, false),
      language: ctx.attr(node, 'language', LANGUAGE, 'ja-JP'),
      speechTimeout: ctx.attr(node, 'speechTimeout', SPEECH_TIMEOUT, 5),
      profanityFilter: ctx.optionalAttr(node, 'profanityFilter', C.bool),
      hints: ctx.attr(node, 'hints', HINTS, []),
      prompts,
      alerts,
    }
  },
  async run(el, ctx) {
    const asr = ctx.asr
    if (asr === undefined) return runtimeError(MISSING_ENGINE)
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
    const language = ctx.value(el.language)
    if (!language.ok) return language.error
    const speechTimeout = ctx.value(el.speechTimeout)
    if (!speechTimeout.ok) return speechTimeout.error
    const profanityFilter = ctx.optional(el.profanityFilter)
    if (!profanityFilter.ok) return profanityFilter.error
    const hints = ctx.value(el.hints)
    if (!hints.ok) return hints.error
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
    const setup = ['play_and_detect_speech_close_asr=true', 'playback_terminators=any']
    if (say.value !== undefined) setup.push(`tts_engine=${TTS_ENGINE}`, `tts_voice=${say.value.voice}`)
    for (const v of setup) {
      const set = await ctx.exec(app('set', v), EXEC_TIMEOUT_MS.short)
      if (!set.ok) return set.error
    }
    const prompt = say.value?.file ?? prompts.value ?? 'silence_stream://1'
    if (prompt.includes('detect:')) return runtimeError('GetInput: a prompt may not contain the text "detect:" (FreeSWITCH would cut the prompt there)')
    const detect = `${prompt} ${detectArgument(asr, { timeoutS: timeout.value, speechTimeoutS: speechTimeout.value, language: language.value, profanityFilter: profanityFilter.value, hints: hints.value })}`
    const rest = [
      '1',
      String(Math.max(1, numDigits.value - 1)),
      '1',
      String(interdigit.value * 1000),
      finishOnKey.value === '' ? 'none' : finishOnKey.value,
      'silence_stream://1',
      'silence_stream://1',
      DIGITS_VAR,
      '.',
      String(interdigit.value * 1000),
    ].join(' ')

    for (let attempt = 1; attempt <= maxTries.value; attempt++) {
      const unset = await ctx.exec(app('unset', 'playback_terminator_used'), EXEC_TIMEOUT_MS.short)
      if (!unset.ok) return unset.error
      const done = await ctx.exec(app('play_and_detect_speech', detect), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
      const result = readSpeechResult(done.value['variable_detect_speech_result'])
      const key = result.kind === 'dtmf' ? result.key : (done.value['variable_playback_terminator_used'] ?? '')
      if (key !== '') {
        let input = key === finishOnKey.value ? '' : key
        if (input !== '' && numDigits.value > 1) {
          const more = await ctx.exec(app('play_and_get_digits', rest), EXEC_TIMEOUT_MS.media)
          if (!more.ok) return more.error
          input += more.value[`variable_${DIGITS_VAR}`] ?? ''
        }
        if (input === '') continue
        if ([...input].every((k) => validDigits.value.includes(k))) {
          ctx.setDigits(input)
          ctx.setResults({ InputType: 'dtmf', Speech: '', Confidence: '' })
          return follow(action.value, ctx, 'GetInput')
        }
        ctx.log.debug({ attempt, invalid: input }, 'ivr GetInput: invalid input')
        if (alerts.value !== undefined) {
          const alerted = await ctx.exec(app('playback', alerts.value), EXEC_TIMEOUT_MS.media)
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
