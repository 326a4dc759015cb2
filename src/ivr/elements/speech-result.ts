/**
 * What `play_and_detect_speech` left in `detect_speech_result`, read into one shape whatever
 * the engine (GetInput, get-input.ts). FreeSWITCH 1.10.12 writes there:
 *
 * - `DIGIT: <key>` when a key in playback_terminators stopped it
 *   (test/fixtures/freeswitch/esl/42-play-and-detect-speech-dtmf.txt);
 * - the engine's own result text otherwise. mod_test (the `test` engine) writes JSON:
 *   `{"grammar": "g", "text": "agent", "confidence": 87.300000}`, and with nothing heard
 *   `{"grammar": "g", "text": "", "confidence": 0, "error": "no_input"}`
 *   (esl/41-play-and-detect-speech.txt; mod_test.c test_asr_get_results); MRCP engines
 *   (mod_unimrcp) write NLSML: `<result><interpretation confidence="..."><input mode="speech">
 *   text</input></interpretation></result>`, with `<noinput/>` or `<nomatch/>` inside `<input>`
 *   when nothing was recognised.
 *
 * Confidence is reported 0-1: engines that count 0-100 (mod_test's 87.3; NLSML of MRCPv1) are
 * scaled. Text that is none of these is "no input" (and logged by the caller).
 */
import { XMLParser } from 'fast-xml-parser'

export type SpeechResult =
  | { readonly kind: 'dtmf'; readonly key: string }
  | { readonly kind: 'speech'; readonly text: string; readonly confidence: number }
  | { readonly kind: 'none'; readonly why: string }

const DIGIT_RE = /^DIGIT: ([0-9*#A-D])$/

/** 0-1 from an engine's number (0-1 or 0-100); undefined when it is no number. */
function confidenceOf(raw: unknown): number | undefined {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN
  if (!Number.isFinite(n) || n < 0) return undefined
  const scaled = n > 1 ? n / 100 : n
  return Math.min(1, Math.round(scaled * 1000) / 1000)
}

function fromJson(text: string): SpeechResult {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return { kind: 'none', why: 'the result is not JSON' }
  }
  if (typeof v !== 'object' || v === null) return { kind: 'none', why: 'the result is not a JSON object' }
  const r = v as { text?: unknown; confidence?: unknown; error?: unknown }
  if (typeof r.error === 'string') return { kind: 'none', why: r.error }
  const said = typeof r.text === 'string' ? r.text.trim() : ''
  if (said === '') return { kind: 'none', why: 'empty transcript' }
  return { kind: 'speech', text: said, confidence: confidenceOf(r.confidence) ?? 0 }
}

const nlsml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  // Nothing of the engine's text is expanded beyond the five XML entities.
  processEntities: true,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
})

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v])
const textOf = (v: unknown): string => {
  if (typeof v === 'string') return v.trim()
  if (typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)['#text'] === 'string') return ((v as Record<string, unknown>)['#text'] as string).trim()
  return ''
}

function fromNlsml(text: string): SpeechResult {
  let doc: unknown
  try {
    doc = nlsml.parse(text)
  } catch {
    return { kind: 'none', why: 'the result is not XML' }
  }
  const result = (doc as Record<string, unknown> | undefined)?.['result']
  if (typeof result !== 'object' || result === null) return { kind: 'none', why: 'no <result> in the NLSML' }
  for (const interpretation of asArray((result as Record<string, unknown>)['interpretation'])) {
    if (typeof interpretation !== 'object' || interpretation === null) continue
    const i = interpretation as Record<string, unknown>
    for (const input of asArray(i['input'])) {
      const inp = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : { '#text': input }
      if (inp['noinput'] !== undefined || inp['nomatch'] !== undefined) return { kind: 'none', why: inp['noinput'] !== undefined ? 'no_input' : 'no_match' }
      const said = textOf(inp)
      if (said === '') continue
      return { kind: 'speech', text: said, confidence: confidenceOf(inp['@confidence']) ?? confidenceOf(i['@confidence']) ?? 0 }
    }
  }
  return { kind: 'none', why: 'no recognised input in the NLSML' }
}

export function readSpeechResult(raw: string | undefined): SpeechResult {
  const text = (raw ?? '').trim()
  if (text === '') return { kind: 'none', why: 'no result' }
  const digit = DIGIT_RE.exec(text)
  if (digit !== null) return { kind: 'dtmf', key: digit[1] as string }
  if (text.startsWith('{')) return fromJson(text)
  if (text.startsWith('<')) return fromNlsml(text)
  return { kind: 'none', why: 'a result in no known form' }
}
