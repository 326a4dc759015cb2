/**
 * The applications of the IVR's `<Record>` and `<GetInput>` (src/ivr/elements/record.ts,
 * get-input.ts), as FreeSWITCH 1.10.12 runs them on the captures
 * test/fixtures/freeswitch/esl/40-42. The simulator has no media: what the far end "says" is its
 * sim behaviour's `talk` (seconds of voice once a record or a detection runs; absent: silence),
 * and its keys are its `dtmf` (pressed once per call when an input application runs, as for
 * play_and_get_digits: digits.ts).
 *
 * `record <path> [<limit s>] [<threshold>] [<silence s>]` (mod_dptools.c record_function,
 * switch_ivr_play_say.c switch_ivr_record_file):
 * - RECORD_START (`Record-File-Path`) when it begins;
 * - it ends after the voice and `silence` seconds of silence (which are not written), at `limit`
 *   seconds, at a key of `playback_terminators` (`playback_terminator_used`), or at the hangup;
 * - then the variables `record_file_size`, `record_samples`, `record_seconds`, `record_ms` and
 *   RECORD_STOP; nothing heard: the 44-byte header alone, record_ms 0 (esl/40).
 *
 * `play_and_detect_speech <file> detect:<engine> {<params>}<grammar>` (mod_dptools.c,
 * switch_ivr_async.c switch_ivr_play_and_detect_speech): the prompt plays (PROMPT_SEC), then the
 * engine listens; `detect_speech_result` holds what mod_test answers (esl/41):
 * `{"grammar": "<g>", "text": "agent", "confidence": 87.300000}` once the far end has talked
 * (after its voice, capped by `speech-timeout`, and mod_test's 700 ms of silence), or
 * `{"grammar": "<g>", "text": "", "confidence": 0, "error": "no_input"}` after `no-input-timeout`
 * ms (mod_test's default 5000) of silence. A key in `playback_terminators` (`any`: every key)
 * ends it at once with `DIGIT: <key>` and `playback_terminator_used` (esl/42). Every engine name
 * answers as mod_test's `test` does: the simulator has no other recogniser.
 */
import { mkdir, open } from 'node:fs/promises'
import { dirname, isAbsolute } from 'node:path'
import type { Switch } from '../core/switch.js'
import type { Session } from '../model/session.js'
import { separateString } from '../text/fs-strings.js'
import { nextDigit, startFarEndDtmf } from './digits.js'
import { PROMPT_SEC } from './media.js'
import { FRAME_SAMPLES, SAMPLE_RATE, WAV_HEADER_BYTES, wavHeader, writeTone } from './wav-file.js'

/** mod_test's VAD: talking has stopped after 700 ms of silence (mod_test.c test_asr_open silence_ms). */
const VAD_SILENCE_SEC = 0.7

/** The keys that stop a playback or a record (`any`, `none`, or a list). */
function terminatorsOf(s: Session): string {
  const t = s.getVar('playback_terminators') ?? '*'
  if (t === 'none') return ''
  if (t === 'any') return '0123456789*#ABCD'
  return t
}

/**
 * Waits `seconds` or until a key of `terminators` arrives (other keys are read and dropped, as
 * switch_ivr_record_file's input callback drops them); the key, or undefined. `elapsed` gets the
 * simulated seconds waited.
 */
async function untilKey(sw: Switch, s: Session, seconds: number, terminators: string, signal: AbortSignal): Promise<{ key?: string; elapsed: number }> {
  const scale = sw.clock.timeScale > 0 ? sw.clock.timeScale : 1
  const t0 = performance.now()
  const elapsed = (): number => Math.min(seconds, (performance.now() - t0) / 1000 / scale)
  for (;;) {
    const left = seconds - elapsed()
    if (left <= 0 || !s.up || signal.aborted) return { elapsed: elapsed() }
    const d = await nextDigit(sw, s, left, signal)
    // The wait ran out (no key, still up): all of it passed. Measured, a timer of the scaled
    // clock can come a few ms early against performance.now(), which shortened a 2 s recording.
    if (d === undefined) return { elapsed: s.up && !signal.aborted ? seconds : elapsed() }
    if (terminators.includes(d)) return { key: d, elapsed: elapsed() }
  }
}

export async function recordApp(sw: Switch, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  const [path, limitArg, , silenceArg] = separateString(arg.trim(), ' ')
  if (path === undefined || path === '' || !isAbsolute(path)) {
    sw.logger.error({ uuid: s.uuid, path }, 'sim: record: no absolute path')
    return
  }
  const limit = parseInt(limitArg ?? '', 10) > 0 ? parseInt(limitArg ?? '', 10) : Infinity
  const silence = parseInt(silenceArg ?? '', 10) > 0 ? parseInt(silenceArg ?? '', 10) : 3
  let file
  try {
    await mkdir(dirname(path), { recursive: true })
    file = await open(path, 'w')
    await file.write(wavHeader(1, 0), 0, WAV_HEADER_BYTES, 0)
  } catch (e) {
    await file?.close().catch(() => undefined)
    sw.logger.error({ uuid: s.uuid, path, err: e }, 'sim: record: Error opening')
    return
  }
  startFarEndDtmf(sw, s)
  sw.bus.fire('RECORD_START', [...s.eventData(), ['Record-File-Path', path]])
  const terminators = terminatorsOf(s)
  const voice = Math.min(s.farEnd?.talk ?? 0, limit)
  const talking = await untilKey(sw, s, voice, terminators, signal)
  const recorded = talking.elapsed
  let key = talking.key
  if (key === undefined && s.up && recorded < limit) {
    // The silence after the voice ends it (or the limit, whichever comes first); none of it is written.
    const quiet = await untilKey(sw, s, Math.min(silence, limit - recorded), terminators, signal)
    key = quiet.key
  }
  const samples = Math.floor((recorded * SAMPLE_RATE) / FRAME_SAMPLES) * FRAME_SAMPLES
  let size = WAV_HEADER_BYTES
  try {
    if (samples > 0) size = await writeTone(file, 1, samples)
  } finally {
    await file.close().catch(() => undefined)
  }
  if (key !== undefined) s.setVar('playback_terminator_used', key)
  s.setVar('record_file_size', String(size))
  s.setVar('record_samples', String(samples))
  s.setVar('record_seconds', String(Math.floor(samples / SAMPLE_RATE)))
  s.setVar('record_ms', String(Math.floor((samples * 1000) / SAMPLE_RATE)))
  sw.bus.fire('RECORD_STOP', [...s.eventData(), ['Record-File-Path', path]])
}

/** `{a=b,c=d}grammar` → the parameters and the grammar. */
function grammarOf(text: string): { params: Map<string, string>; grammar: string } {
  const params = new Map<string, string>()
  const m = /^\{([^}]*)\}(.*)$/s.exec(text.trim())
  if (m === null) return { params, grammar: text.trim() }
  for (const pair of (m[1] ?? '').split(',')) {
    const eq = pair.indexOf('=')
    if (eq > 0) params.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim())
  }
  return { params, grammar: (m[2] ?? '').trim() }
}

const msParam = (params: Map<string, string>, name: string, dflt: number): number => {
  const n = parseInt(params.get(name) ?? '', 10)
  return Number.isFinite(n) && n > 0 ? n / 1000 : dflt
}

export async function playAndDetectSpeech(sw: Switch, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  const at = arg.indexOf(' detect:')
  if (at < 0) {
    sw.logger.error({ uuid: s.uuid }, 'sim: play_and_detect_speech: no detect: part')
    return
  }
  const rest = arg.slice(at + ' detect:'.length)
  const space = rest.indexOf(' ')
  const { params, grammar } = grammarOf(space < 0 ? '' : rest.slice(space + 1))
  startFarEndDtmf(sw, s)
  const terminators = terminatorsOf(s)
  const noInput = msParam(params, 'no-input-timeout', 5)
  const speechTimeout = msParam(params, 'speech-timeout', 10)
  const grammarJson = JSON.stringify(grammar)
  const done = (result: string, key?: string): void => {
    if (key !== undefined) s.setVar('playback_terminator_used', key)
    s.setVar('detect_speech_result', result)
  }
  const prompt = await untilKey(sw, s, PROMPT_SEC, terminators, signal)
  if (prompt.key !== undefined) return done(`DIGIT: ${prompt.key}`, prompt.key)
  if (!s.up) return
  const talk = s.farEnd?.talk ?? 0
  const listening = await untilKey(sw, s, talk > 0 ? Math.min(talk, speechTimeout) + VAD_SILENCE_SEC : noInput, terminators, signal)
  if (listening.key !== undefined) return done(`DIGIT: ${listening.key}`, listening.key)
  if (!s.up) return
  if (talk > 0) done(`{"grammar": ${grammarJson}, "text": "agent", "confidence": 87.300000}`)
  else done(`{"grammar": ${grammarJson}, "text": "", "confidence": 0, "error": "no_input"}`)
}
