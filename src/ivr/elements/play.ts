/**
 * `<Play loop terminators>`: plays an audio file of the prompt folder or an http(s) URL
 * (through mod_http_cache, see media.ts) `loop` times with mod_dptools `playback`. What a
 * document may name is audio-source.ts's rule: refused forms fail the document (an inline one
 * at request time), or, from a template, are a runtime error.
 *
 * Terminators: playback stops on a key listed in the channel variable `playback_terminators`,
 * and FreeSWITCH's default when it is unset is `*` (mod_dptools.c on_dtmf); `none` turns it
 * off. So the variable is set before every Play, and a key that stopped the playback
 * (`playback_terminator_used`) also ends the loop. `Application-Response` says FILE PLAYED,
 * FILE NOT FOUND or PLAYBACK ERROR (playback_function): the last two are runtime errors.
 * The call is answered first (a prompt needs media).
 */
import { app } from '../../pbx/commands.js'
import { err, type Result } from '../../util/result.js'
import { dtmfKeys, intIn } from '../syntax/checks.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import { AUDIO_SOURCE_RULE, readAudioSource, type AudioSource } from './audio-source.js'
import { audioFile, repeat } from './media.js'
import { EXEC_TIMEOUT_MS, NEXT, runtimeError, type ElementContext, type Outcome, type PromptModule } from './types.js'

export interface Play extends ElementBase {
  readonly type: 'Play'
  /** 1-5, default 1. */
  readonly loop: Param<number>
  /** DTMF keys that stop the playback; '' (default) means none. */
  readonly terminators: Param<string>
  /** A file of the prompt folder or an http(s) URL (the element's text). */
  readonly source: Param<AudioSource>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    Play: Play
  }
}

const AUDIO_SOURCE: ValueCheck<AudioSource> = { rule: AUDIO_SOURCE_RULE, convert: readAudioSource }

/** The spec fixes loop to 1-5. */
const LOOP = intIn(1, 5)
const TERMINATORS = dtmfKeys(0, 16)

/** playback_function's responses that mean the file was not played. */
const FAILED = new Set(['FILE NOT FOUND', 'PLAYBACK ERROR'])

/** The source as the document named it (errors tell the author what they wrote). */
const describe = (s: AudioSource): string => (s.kind === 'url' ? s.url : s.name)

function playFile(el: Play, ctx: ElementContext): Result<string, Outcome> {
  const source = ctx.value(el.source)
  if (!source.ok) return source
  const f = audioFile(source.value, ctx.mediaDir)
  return f.ok ? f : err(runtimeError(`Play: ${f.error}`))
}

export const play: PromptModule<Play> = {
  name: 'Play',
  attributes: ['loop', 'terminators'],
  parse(node, ctx) {
    return {
      type: 'Play',
      pos: node.pos,
      loop: ctx.attr(node, 'loop', LOOP, 1),
      terminators: ctx.attr(node, 'terminators', TERMINATORS, ''),
      source: ctx.textValue(node, 'the audio file or http(s) URL to play', AUDIO_SOURCE),
    }
  },
  files(el, ctx) {
    return repeat(playFile(el, ctx), el.loop, ctx)
  },
  async run(el, ctx) {
    const source = ctx.value(el.source)
    if (!source.ok) return source.error
    const loop = ctx.value(el.loop)
    if (!loop.ok) return loop.error
    const terminators = ctx.value(el.terminators)
    if (!terminators.ok) return terminators.error
    const file = audioFile(source.value, ctx.mediaDir)
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
      if (FAILED.has(response)) return runtimeError(`Play: ${response.toLowerCase()}: ${describe(source.value)}`)
      const used = done.value.variable_playback_terminator_used ?? ''
      if (terminators.value !== '' && used !== '' && terminators.value.includes(used)) break
    }
    return NEXT
  },
}
