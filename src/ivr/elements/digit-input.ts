/**
 * What `<GetDigits>` (get-digits.ts) and `<GetInput>` (get-input.ts) share: the DTMF attributes
 * and their limits, the prompt and alert children (Play, Speak, Wait), and how the prompts become
 * the one file FreeSWITCH plays while it listens (get-digits.ts says how it plays them). Each
 * element module still owns what is its own: its action, GetInput's speech attributes, and how it
 * runs.
 */
import { ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import { quote } from '../syntax/params.js'
import { fail, positionOf, type ElementNode, type ParseContext } from '../syntax/reader.js'
import type { Param } from '../syntax/types.js'
import { BEEP, fileString, fliteVoice, promptText } from './media.js'
import { play, type Play } from './play.js'
import { speak, type Speak } from './speak.js'
import type { ElementContext, Outcome } from './types.js'
import { wait, type Wait } from './wait.js'

/** What a GetDigits or a GetInput plays: Play, Speak and Wait children. */
export type Prompt = Play | Speak | Wait

/** The channel variable play_and_get_digits writes the keys to. */
export const DIGITS_VAR = 'cod_ivr_digits'

/** The DTMF attributes, in the order they are read (after `action`). */
export const DIGIT_ATTRIBUTES = ['timeout', 'interdigitTimeout', 'finishOnKey', 'numDigits', 'validDigits', 'maxTries', 'playBeep'] as const

export interface DigitInput {
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
  /** Children without `purpose` (or, where allowed, `purpose="prompt"`), in document order: played to ask for input. */
  readonly prompts: readonly Prompt[]
  /** Children with `purpose="alert"`, in document order: played after invalid input. */
  readonly alerts: readonly Prompt[]
}

const TIMEOUT = C.intIn(1, 300)
const NUM_DIGITS = C.intIn(1, 99)
const MAX_TRIES = C.intIn(1, 10)
const FINISH_ON_KEY = C.dtmfKeys(0, 1)
const VALID_DIGITS = C.dtmfKeys(1, 16)

const PROMPTS = [play, speak, wait] as const

/**
 * The prompt and alert children of `<name>`. `promptPurpose`: whether `purpose="prompt"` may be
 * written (GetInput) or only `alert` (GetDigits).
 */
export function readPrompts(node: ElementNode, ctx: ParseContext, name: 'GetDigits' | 'GetInput', promptPurpose: boolean): Pick<DigitInput, 'prompts' | 'alerts'> {
  const prompts: Prompt[] = []
  const alerts: Prompt[] = []
  for (const c of ctx.children(node, `<${name}>`)) {
    const prompt = PROMPTS.find((m) => m.name === c.el.name)
    if (prompt === undefined) {
      ctx.refuseUnknown(c)
      return fail(positionOf(c), `<${name}> may contain only <Play>, <Speak> and <Wait>, found <${c.el.name}>`)
    }
    const child = ctx.enter(node, c, [...prompt.attributes, 'purpose'])
    const purpose = child.attrs.get('purpose')
    if (purpose !== undefined && purpose !== 'alert' && !(promptPurpose && purpose === 'prompt')) {
      fail(child.pos, promptPurpose ? `${c.el.name} purpose ${quote(purpose)}: must be prompt or alert (absent: prompt)` : `${c.el.name} purpose ${quote(purpose)}: must be alert (or absent for a prompt)`)
    }
    ;(purpose === 'alert' ? alerts : prompts).push(prompt.parse(child, ctx))
  }
  return { prompts, alerts }
}

/** The DTMF attributes (DIGIT_ATTRIBUTES), with their limits and defaults. */
export function readDigitAttributes(node: ElementNode, ctx: ParseContext): Omit<DigitInput, 'prompts' | 'alerts'> {
  return {
    timeout: ctx.attr(node, 'timeout', TIMEOUT, 5),
    interdigitTimeout: ctx.attr(node, 'interdigitTimeout', TIMEOUT, 5),
    finishOnKey: ctx.attr(node, 'finishOnKey', FINISH_ON_KEY, '#'),
    numDigits: ctx.attr(node, 'numDigits', NUM_DIGITS, 99),
    validDigits: ctx.attr(node, 'validDigits', VALID_DIGITS, '0123456789*#'),
    maxTries: ctx.attr(node, 'maxTries', MAX_TRIES, 1),
    playBeep: ctx.attr(node, 'playBeep', C.bool, false),
  }
}

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

/** Prompts as one file (undefined: nothing to play), `extra` files after them. */
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

/**
 * Prompts that are one Speak, spoken on FreeSWITCH 1.10.12: that release has no `tts://` file
 * format ("[ERR] switch_core_file.c Invalid file format [tts]", seen by the real-FreeSWITCH lane:
 * play_and_get_digits failed and the IVR ended the call), but switch_ivr_play_file speaks a
 * `say:<text>` file with the channel's `tts_engine` and `tts_voice` (switch_ivr_play_say.c), DTMF
 * stopping it as for any prompt. `say:` cannot stand inside a `file_string://`, so prompts of
 * several items keep `tts://` (still unplayable on 1.10.12: docs/ivr.md, GetDigits). Undefined
 * when the prompts are not exactly one Speak played once.
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

/** The DTMF settings of one run, resolved, and what it plays, checked against the media rules. */
export interface DigitSettings {
  readonly timeoutS: number
  readonly interdigitS: number
  readonly finishOnKey: string
  readonly numDigits: number
  readonly validDigits: string
  readonly maxTries: number
  /** The prompts as one file (the beep after them), undefined when there is nothing to play. */
  readonly prompts: string | undefined
  /** One Speak to speak as `say:` with this voice instead of `prompts` (sayPrompt). */
  readonly say: { readonly file: string; readonly voice: string } | undefined
  /** The alerts as one file, undefined when there are none. */
  readonly alerts: string | undefined
}

/** Resolves the DTMF attributes and the prompt files of a run (templates, media rules); an Outcome when one fails. */
export async function resolveDigitInput(el: DigitInput, ctx: ElementContext): Promise<Result<DigitSettings, Outcome>> {
  const timeout = ctx.value(el.timeout)
  if (!timeout.ok) return timeout
  const interdigit = ctx.value(el.interdigitTimeout)
  if (!interdigit.ok) return interdigit
  const finishOnKey = ctx.value(el.finishOnKey)
  if (!finishOnKey.ok) return finishOnKey
  const numDigits = ctx.value(el.numDigits)
  if (!numDigits.ok) return numDigits
  const validDigits = ctx.value(el.validDigits)
  if (!validDigits.ok) return validDigits
  const maxTries = ctx.value(el.maxTries)
  if (!maxTries.ok) return maxTries
  const beep = ctx.value(el.playBeep)
  if (!beep.ok) return beep
  const prompts = promptsFile(el.prompts, ctx, beep.value ? [BEEP] : [])
  if (!prompts.ok) return prompts
  const say = beep.value ? ok(undefined) : sayPrompt(el.prompts, ctx)
  if (!say.ok) return say
  const alerts = promptsFile(el.alerts, ctx)
  if (!alerts.ok) return alerts
  const allowed = await ctx.checkMedia([prompts.value, alerts.value])
  if (!allowed.ok) return { ok: false, error: allowed.error }
  return ok({
    timeoutS: timeout.value,
    interdigitS: interdigit.value,
    finishOnKey: finishOnKey.value,
    numDigits: numDigits.value,
    validDigits: validDigits.value,
    maxTries: maxTries.value,
    prompts: prompts.value,
    say: say.value,
    alerts: alerts.value,
  })
}
