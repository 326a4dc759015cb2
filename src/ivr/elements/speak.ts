/**
 * `<Speak language voice loop>`: text to speech with mod_dptools `speak <engine>|<voice>|<text>`
 * and mod_flite. The voice comes from voice/language (media.ts fliteVoice); the text is
 * neutralised so that it can never be expanded (`${...}`), set TTS parameters or break the
 * argument (media.ts speakText). A text with nothing left to say is skipped.
 */
import { app } from '../../pbx/commands.js'
import type { Speak } from '../document/types.js'
import { fliteVoice, speakText, TTS_ENGINE } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, type ElementModule } from './types.js'

export const speak: ElementModule<Speak> = {
  name: 'Speak',
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
