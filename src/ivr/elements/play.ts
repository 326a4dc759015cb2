/**
 * `<Play loop terminators>`: plays an audio file or http(s) URL (through mod_http_cache, see
 * media.ts) `loop` times with mod_dptools `playback`.
 *
 * Terminators: playback stops on a key listed in the channel variable `playback_terminators`,
 * and FreeSWITCH's default when it is unset is `*` (mod_dptools.c on_dtmf); `none` turns it
 * off. So the variable is set before every Play, and a key that stopped the playback
 * (`playback_terminator_used`) also ends the loop. `Application-Response` says FILE PLAYED,
 * FILE NOT FOUND or PLAYBACK ERROR (playback_function): the last two are runtime errors.
 * The call is answered first (a prompt needs media).
 */
import { app } from '../../pbx/commands.js'
import type { Play } from '../document/types.js'
import { audioFile } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, runtimeError, type ElementModule } from './types.js'

/** playback_function's responses that mean the file was not played. */
const FAILED = new Set(['FILE NOT FOUND', 'PLAYBACK ERROR'])

export const play: ElementModule<Play> = {
  name: 'Play',
  async run(el, ctx) {
    const source = ctx.value(el.source)
    if (!source.ok) return source.error
    const loop = ctx.value(el.loop)
    if (!loop.ok) return loop.error
    const terminators = ctx.value(el.terminators)
    if (!terminators.ok) return terminators.error
    const file = audioFile(source.value)
    if (!file.ok) return runtimeError(`Play: ${file.error}`)
    const allowed = await ctx.checkMedia([file.value])
    if (!allowed.ok) return allowed.error

    const answered = await ctx.answer()
    if (!answered.ok) return answered.error
    const set = await ctx.exec(app('set', `playback_terminators=${terminators.value === '' ? 'none' : terminators.value}`))
    if (!set.ok) return set.error
    for (let i = 0; i < loop.value; i++) {
      const done = await ctx.exec(app('playback', file.value), EXEC_TIMEOUT_MS.media)
      if (!done.ok) return done.error
      const response = done.value['Application-Response'] ?? ''
      if (FAILED.has(response)) return runtimeError(`Play: ${response.toLowerCase()}: ${source.value}`)
      const used = done.value.variable_playback_terminator_used ?? ''
      if (terminators.value !== '' && used !== '' && terminators.value.includes(used)) break
    }
    return NEXT
  },
}
