/**
 * `<Speak language voice loop>`: text to speech with mod_dptools `speak <engine>|<voice>|<text>`
 * and mod_flite. The voice comes from voice/language (media.ts fliteVoice); the text is
 * neutralised so that it can never be expanded (`${...}`), set TTS parameters or break the
 * argument (media.ts speakText). A text with nothing left to say is skipped.
 */
import { app } from '../../pbx/commands.js'
import { err, ok, type Result } from '../../util/result.js'
import * as C from '../syntax/checks.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import { fliteVoice, repeat, speakText, TTS_ENGINE, ttsFile } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementContext, type Outcome, type PromptModule } from './types.js'

export interface Speak extends ElementBase {
  readonly type: 'Speak'
  /** Default 'ja-JP'. */
  readonly language: Param<string>
  /** Absent: the TTS engine's default voice. */
  readonly voice: Param<string> | undefined
  /** 1-5, default 1. */
  readonly loop: Param<number>
  readonly text: Param<string>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Speak: Speak
  }
}

const LANGUAGE_RE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/
const LANGUAGE_RULE = 'a language tag like ja-JP or en-US'
const LANGUAGE: ValueCheck<string> = {
  rule: LANGUAGE_RULE,
  convert: (raw) => {
    const s = raw.trim()
    return LANGUAGE_RE.test(s) ? ok(s) : err(`must be ${LANGUAGE_RULE}`)
  },
}

const VOICE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
const VOICE_RULE = 'a voice name (A-Z a-z 0-9 _ . -)'
const VOICE: ValueCheck<string> = {
  rule: VOICE_RULE,
  convert: (raw) => {
    const s = raw.trim()
    return VOICE_RE.test(s) ? ok(s) : err(`must be ${VOICE_RULE}`)
  },
}

/** The spec fixes loop to 1-5. */
const LOOP = C.intIn(1, 5)

function speakFile(el: Speak, ctx: ElementContext): Result<string | undefined, Outcome> {
  const words = ctx.value(el.text)
  if (!words.ok) return words
  const lang = ctx.value(el.language)
  if (!lang.ok) return lang
  const v = ctx.optional(el.voice)
  if (!v.ok) return v
  return ok(ttsFile(fliteVoice(lang.value, v.value), words.value))
}

export const speak: PromptModule<Speak> = {
  name: 'Speak',
  attributes: ['language', 'voice', 'loop'],
  parse(node, ctx) {
    return {
      type: 'Speak',
      pos: node.pos,
      language: ctx.attr(node, 'language', LANGUAGE, 'ja-JP'),
      voice: ctx.optionalAttr(node, 'voice', VOICE),
      loop: ctx.attr(node, 'loop', LOOP, 1),
      text: ctx.textValue(node, 'the words to speak', C.text(false)),
    }
  },
  files(el, ctx) {
    return repeat(speakFile(el, ctx), el.loop, ctx)
  },
  async run(el, ctx) {
    const text = ctx.value(el.text)
    if (!text.ok) return text.error
    const language = ctx.value(el.language)
    if (!language.ok) return language.error
    const voice = ctx.optional(el.voice)
    if (!voice.ok) return voice.error
    const loop = ctx.value(el.loop)
    if (!loop.ok) return loop.error
    const words = speakText(text.value)
    if (words === '') return NEXT

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    const arg = `${TTS_ENGINE}|${fliteVoice(language.value, voice.value)}|${words}`
    for (let i = 0; i < loop.value; i++) {
      const done = await ctx.exec(app('speak', arg), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
    }
    return NEXT
  },
}
