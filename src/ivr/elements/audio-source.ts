/**
 * What an IVR document may name as audio (`<Play>` text, in its own right or as a GetDigits
 * prompt): an http(s) URL, which must later pass the outbound address policy (ctx.checkMedia,
 * net/address-guard.ts), or a plain file name inside the prompt folder `ivr.media_dir`. Nothing
 * else reaches FreeSWITCH's file layer, because that layer interprets far more than paths
 * (signalwire/freeswitch, as read for this rule):
 *
 * - switch_ivr_play_say.c switch_ivr_play_file: a name with `:` may be `phrase:<macro>:<data>`
 *   (a phrase macro) or `say:<text>` (TTS); a name that is not a path (switch_utils.h
 *   switch_is_file_path: not starting with `/`, no `://`) is prefixed with the channel's
 *   `sound_prefix`; leading `{...}` blocks are kept as file parameters; the channel variable
 *   `playback_delimiter` splits the name on one character.
 * - switch_core_file.c switch_core_perform_file_open: `{k=v,...}` at the start sets file-handle
 *   parameters (modname, timeout, auth_username...); `<module>://<rest>` hands the rest to any
 *   loaded file module (`file_string://` plays a `!` list, `shout://`, `tone_stream://`,
 *   `silence_stream://`, `local_stream://`, `http_cache://`, `vlc://`, `av://`...); `https://`
 *   names containing "youtube" run an API command (`youtube_resolver`).
 * - mod_dptools.c playback_function: `@@<n>` starts at sample n; file_string_file_open splits
 *   on `!`; play_and_get_digits splits its arguments on blanks with `'` quoting.
 * - switch_channel.c / switch_core_session.c: `${...}` and `$${...}` in application data are
 *   expanded (`${system(...)}` style API calls included) before the application sees them.
 * - an absolute name (`/etc/passwd`, `/dev/urandom`) opens whatever the FreeSWITCH user can
 *   read; `..` leaves any folder.
 *
 * So a file name is refused unless it is relative, made of segments of `A-Z a-z 0-9 _ - .`
 * (not starting with `.`, so no `.`, `..` or hidden files), separated by single `/`; the
 * daemon itself prefixes `ivr.media_dir` (an absolute path, so `sound_prefix` never applies).
 * Percent escapes, backslashes, `~`, drive letters, NUL and look-alike Unicode characters are
 * refused by the alphabet; each refusal says which rule it broke.
 */
import { err, ok, type Result } from '../../util/result.js'
import { checkUrl } from '../syntax/checks.js'

export type AudioSource =
  /** An http(s) URL, played through mod_http_cache once the address policy allowed it. */
  | { readonly kind: 'url'; readonly url: string }
  /** A file name relative to `ivr.media_dir`, already held to the rules above. */
  | { readonly kind: 'file'; readonly name: string }

export const AUDIO_SOURCE_RULE =
  'an audio file path relative to the prompt folder (A-Z a-z 0-9 _ . - and / between names; no absolute path, no "..") or an http or https URL'

/** Longest file name (with its folders) and longest folder or file name in it. */
const MAX_AUDIO_NAME = 255
const MAX_SEGMENT = 100

const SEGMENT_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/
const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*:/
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/

/** The first rule a file name breaks (in words an IVR author can act on), or undefined. */
function fileNameProblem(s: string): string | undefined {
  if (CONTROL_RE.test(s)) return 'contains a control character'
  if (s.includes('://')) return 'is not an http or https URL (it names a FreeSWITCH file module, "<module>://")'
  if (SCHEME_RE.test(s)) return 'is not an http or https URL (it starts with a scheme or drive letter, "x:")'
  if (s.startsWith('/')) return 'is an absolute path: a file is named relative to the prompt folder'
  if (s.startsWith('~')) return 'starts with "~"'
  if (s.includes('\\')) return 'contains a backslash'
  if (s.includes('$')) return 'contains "$" (FreeSWITCH would expand ${...})'
  if (s.includes('{') || s.includes('}')) return 'contains "{" or "}" (FreeSWITCH file parameters)'
  if (/[!,|@':;]/.test(s)) return 'contains one of ! , | @ \' : ; (separators FreeSWITCH interprets in file names)'
  if (s.includes('%')) return 'contains "%" (file names are not percent-decoded)'
  if (/\s/.test(s)) return 'contains white space'
  if (s.length > MAX_AUDIO_NAME) return `is longer than ${MAX_AUDIO_NAME} characters`
  for (const segment of s.split('/')) {
    if (segment === '') return 'has an empty folder name ("//" or a trailing "/")'
    if (segment === '..' || segment === '.') return `has a "${segment}" folder`
    if (segment.startsWith('.')) return 'has a name starting with "."'
    if (segment.length > MAX_SEGMENT) return `has a name longer than ${MAX_SEGMENT} characters`
    if (!SEGMENT_RE.test(segment)) return 'has a character outside A-Z a-z 0-9 _ . -'
  }
  return undefined
}

/** Reads a Play source (the parser for literals, resolveParam for rendered templates). */
export function readAudioSource(raw: string): Result<AudioSource, string> {
  const s = raw.trim()
  if (/^https?:/i.test(s)) {
    const u = checkUrl(s)
    return u.ok ? ok({ kind: 'url', url: u.value }) : err(`must be ${AUDIO_SOURCE_RULE}; found ${u.error}`)
  }
  const problem = fileNameProblem(s)
  return problem === undefined ? ok({ kind: 'file', name: s }) : err(`must be ${AUDIO_SOURCE_RULE}: ${JSON.stringify(s.slice(0, 80))} ${problem}`)
}

/** An absolute folder of plain names (config ivr.media_dir has this shape; checked again here). */
const MEDIA_DIR_RE = /^(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+$/

/** The file FreeSWITCH opens: the prompt folder, then the (already checked) name. */
export function mediaPath(mediaDir: string, name: string): Result<string, string> {
  if (!MEDIA_DIR_RE.test(mediaDir) || mediaDir.split('/').some((s) => s === '..' || s === '.')) {
    return err(`the prompt folder ${JSON.stringify(mediaDir)} is not an absolute folder of plain names`)
  }
  const problem = fileNameProblem(name)
  if (problem !== undefined) return err(`${JSON.stringify(name.slice(0, 80))} ${problem}`)
  return ok(`${mediaDir}/${name}`)
}
