/**
 * How prompts are written for FreeSWITCH: audio files and http(s) URLs, text to speech, silence
 * and beeps, as application arguments and as items of a `file_string://` (GetDigits prompts).
 *
 * What FreeSWITCH does with the text, and so what must not be in it (signalwire/freeswitch):
 * - switch_core_session_execute_application expands `${...}`/`$${...}` and the escapes `\$`
 *   `\'` in application data (switch_channel_expand_variables, switch_string_var_check_const,
 *   switch_string_has_escaped_data): `$` and `\` never reach an argument (commands.app refuses
 *   `$` anyway).
 * - mod_dptools.c playback_function: `file@@<n>` starts playing at sample n, so `@` is encoded in
 *   URLs.
 * - switch_core_speech.c switch_core_speech_feed_tts: a text that starts with `{` sets TTS
 *   parameters (`{name=value,...}text`), so braces become parentheses.
 * - mod_dptools.c file_string_file_open splits on `!`, tts_file_open splits `engine|voice|text`
 *   on `|`, and both run cleanup_separated_string (switch_utils.c), which removes `'` pairs and
 *   resolves `\` escapes; play_and_get_digits splits its arguments on blanks with `'` quoting
 *   (separate_string_blank_delim). Prompt text inside a file string therefore loses `'` and `!`.
 * - mod_http_cache.c: `http_cache://<url>` is always registered when the module is loaded; plain
 *   `http://`/`https://` file formats only with `enable-file-formats` in http_cache.conf, so URLs
 *   are played through `http_cache://` (FreeSWITCH downloads and caches the file).
 * - mod_flite.c: the voices are kal (8 kHz), kal16, slt, rms and awb, all English.
 */
import { err, ok, type Result } from '../../util/result.js'
import type { Param } from '../syntax/types.js'
import { mediaPath, type AudioSource } from './audio-source.js'
import type { ElementContext, Outcome } from './types.js'

/** The TTS engine FreeSWITCH has (docs/ivr.md "Speak": "mod_flite at least"). */
export const TTS_ENGINE = 'flite'

/** mod_flite's voices (mod_flite.c flite_speech_open). */
const FLITE_VOICES: readonly string[] = ['kal', 'kal16', 'slt', 'rms', 'awb']

/** Generic voice names documents use for other engines, mapped to the closest flite voice. */
const GENERIC_VOICES: Readonly<Record<string, string>> = {
  female: 'slt',
  woman: 'slt',
  male: 'rms',
  man: 'rms',
}

/** flite's customary default (the vanilla configuration's tts_voice). */
const DEFAULT_FLITE_VOICE = 'kal'

/**
 * The flite voice for a Speak: a flite voice name as given (any case); `female`/`woman` → slt,
 * `male`/`man` → rms; otherwise by language: British and Irish English (`en-GB`, `en-UK`,
 * `en-IE`) → awb, the one voice of the British Isles (Scottish English); anything else, the
 * default `ja-JP` included, → kal. flite speaks English only: Japanese text needs another TTS
 * module in FreeSWITCH.
 */
export function fliteVoice(language: string, voice: string | undefined): string {
  const v = voice?.toLowerCase()
  if (v !== undefined) {
    if (FLITE_VOICES.includes(v)) return v
    const generic = Object.hasOwn(GENERIC_VOICES, v) ? GENERIC_VOICES[v] : undefined
    if (generic !== undefined) return generic
  }
  if (/^en-(gb|uk|ie)\b/i.test(language)) return 'awb'
  return DEFAULT_FLITE_VOICE
}

/** Longest text handed to the TTS engine in one application (app arguments stop at 4096). */
const MAX_TTS_CHARS = 3000

// eslint-disable-next-line no-control-regex -- control characters are what is replaced
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g

/**
 * Text for `speak engine|voice|<text>`: mod_dptools speak_function passes the text after the
 * second `|` unstripped, so only expansion (`$`, `\`), TTS parameters (`{`) and line breaks
 * (control characters) are neutralised. Blanks are collapsed; too long a text is cut at a word.
 */
export function speakText(text: string): string {
  return clip(
    text
      .replace(CONTROL, ' ')
      .replace(/[$\\]/g, ' ')
      .replace(/\{/g, '(')
      .replace(/\}/g, ')'),
  )
}

/** Text for `tts://engine|voice|<text>` inside a file string: also without `'` and `!` (see the file comment). */
export function promptText(text: string): string {
  return speakText(text.replace(/'/g, '').replace(/!/g, '.'))
}

function clip(text: string): string {
  const t = text.replace(/ {2,}/g, ' ').trim()
  if (t.length <= MAX_TTS_CHARS) return t
  const cut = t.slice(0, MAX_TTS_CHARS)
  const space = cut.lastIndexOf(' ')
  return space > MAX_TTS_CHARS / 2 ? cut.slice(0, space) : cut
}

/** Characters kept as they are in the path and query of an audio URL; the rest is %-encoded. */
const URL_KEEP = /[A-Za-z0-9\-._~:/?&=+%;,]/

const encodeUnsafe = (s: string): string => {
  let out = ''
  for (const ch of s) {
    if (URL_KEEP.test(ch)) out += ch
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * An http(s) URL as FreeSWITCH will fetch it: normalised by the WHATWG parser, the fragment
 * dropped (never sent), and every character with a meaning to FreeSWITCH's parsers (`@ ! ' $ (
 * ) * [ ] | { } ^ \` spaces...) percent-encoded in user info, path and query.
 * @internal Exported for tests: test/ivr/runner checks which URLs FreeSWITCH may fetch.
 */
export function fetchableUrl(raw: string): Result<string, string> {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return err(`${JSON.stringify(raw.slice(0, 100))} is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return err(`${JSON.stringify(raw.slice(0, 100))} is not an http or https URL`)
  const user = u.username === '' && u.password === '' ? '' : `${encodeUnsafe(u.username)}${u.password === '' ? '' : `:${encodeUnsafe(u.password)}`}@`
  return ok(`${u.protocol}//${user}${u.host}${encodeUnsafe(u.pathname)}${encodeUnsafe(u.search)}`)
}

/**
 * A Play source as a FreeSWITCH file: a file name inside the prompt folder (`ivr.media_dir`,
 * audio-source.ts says why nothing else), a URL through mod_http_cache (whose address
 * ctx.checkMedia must still allow).
 */
export function audioFile(source: AudioSource, mediaDir: string): Result<string, string> {
  if (source.kind === 'file') return mediaPath(mediaDir, source.name)
  const url = fetchableUrl(source.url)
  return url.ok ? ok(`http_cache://${url.value}`) : url
}

/** `silence_stream://<ms>` (mod_tone_stream). */
export const silence = (ms: number): string => `silence_stream://${Math.max(1, Math.round(ms))}`

/** The beep of GetDigits playBeep: 250 ms of 800 Hz (mod_tone_stream TGML). */
export const BEEP = 'tone_stream://%(250,0,800)'

/** `tts://<engine>|<voice>|<text>` (mod_dptools tts_file_open); undefined when no text is left. */
export function ttsFile(voice: string, text: string): string | undefined {
  const t = promptText(text)
  return t === '' ? undefined : `tts://${TTS_ENGINE}|${voice}|${t}`
}

/** One file, or several played in a row as one (`file_string://a!b`). */
export function fileString(items: readonly string[]): string | undefined {
  if (items.length === 0) return undefined
  if (items.length === 1) return items[0]
  return `file_string://${items.join('!')}`
}

/** A blank-separated application argument: quoted when it holds blanks (it never holds `'`). */
export const blankArg = (s: string): string => (s.includes(' ') ? `'${s}'` : s)

/**
 * A prompt's file `loop` times, for a GetDigits file string (PromptModule.files); no file (a
 * text with nothing left to say) gives no item. The file's values are resolved before the loop,
 * so a document with two bad values always hears about the same one.
 */
export function repeat(file: Result<string | undefined, Outcome>, loop: Param<number>, ctx: ElementContext): Result<string[], Outcome> {
  if (!file.ok) return file
  const f = file.value
  if (f === undefined) return ok([])
  const n = ctx.value(loop)
  if (!n.ok) return n
  return ok(Array.from({ length: n.value }, () => f))
}
