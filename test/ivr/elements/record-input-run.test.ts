/**
 * Record and GetInput on a fake FreeSWITCH: the applications and arguments they run (as
 * test/fixtures/freeswitch/esl/40-42 show FreeSWITCH needs them), what they post and keep, and
 * the error without a speech engine.
 */
import t, { type Test } from 'tap'
import { daemonSchema, domainSchema } from '../../../src/config/schema.js'
import { readSpeechResult } from '../../../src/ivr/elements/speech-result.js'
import type { IvrRecordingStore } from '../../../src/ivr/recordings.js'
import { runtimeOf } from '../../../src/runtime/store.js'
import { ok, err } from '../../../src/util/result.js'
import type { ExecRecord, ExecReply } from '../../support/fake-pbx.js'
import { DOMAIN, MEDIA_DIR, kills, rig, wrap } from '../runner/helpers.js'

const APP = 'https://app.example.test/after'

function runtime(asr?: Record<string, unknown>) {
  const daemon = daemonSchema.parse({
    freeswitch: { mode: 'simulator' },
    xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' },
    http: { prefix: '/v1' },
    ivr: { media_dir: MEDIA_DIR, ...(asr !== undefined ? { asr } : {}) },
  })
  const domain = domainSchema.parse({ name: DOMAIN, api_tokens: ['plain-token-for-tests'], privileges: ['ON_THE_FLY_IVR_ALLOWED'], channel_limit: 20, gateway: 'pstn', time_zone: 'Asia/Tokyo' })
  return runtimeOf({ file: '/test/daemon.yaml', daemon, domains: [domain] })
}

/** An in-memory store with the recording store's rules that matter here (status by the file's audio). */
class FakeStore implements IvrRecordingStore {
  readonly begun: string[] = []
  readonly completed = new Map<string, number | undefined>()
  readonly removed: string[] = []
  /** The audio FreeSWITCH "wrote" (ms), by id: 0 is a header-only file. */
  audioMs = 0
  refuse = false
  recordingFile(domain: string, id: string) {
    return ok(`/rec/${domain}/${id}.wav`)
  }
  async begin(b: { id: string }) {
    if (this.refuse) return err('disk full')
    this.begun.push(b.id)
    return ok({ id: b.id })
  }
  async complete(id: string, facts: { durationMs?: number } = {}) {
    this.completed.set(id, facts.durationMs)
    return ok(this.audioMs > 0 ? { status: 'completed', durationMs: facts.durationMs ?? this.audioMs } : { status: 'failed' })
  }
  async remove(_domain: string, id: string) {
    this.removed.push(id)
    return true
  }
}

async function run(t: Test, xml: string, o: { script: (rec: ExecRecord) => ExecReply | undefined; asr?: Record<string, unknown>; store?: FakeStore; docs?: Record<string, string> }) {
  const store = o.store ?? new FakeStore()
  const rt = runtime(o.asr)
  const r = rig(t, { script: o.script, deps: { runtime: () => rt, recordings: store } })
  for (const [url, body] of Object.entries(o.docs ?? { [APP]: wrap('<Hangup/>') })) r.fetcher.docs.set(url, body)
  r.parkInline(xml)
  await r.settle()
  return { ...r, store }
}

const recordReply = (vars: Record<string, string>) => (rec: ExecRecord): ExecReply | undefined => (rec.app === 'record' ? { kind: 'complete', vars } : undefined)

t.test('Record: beep, terminators, record <path> <maxLength> 200 <timeout>; posts the recording', async (t) => {
  const store = new FakeStore()
  store.audioMs = 2000
  const r = await run(t, wrap(`<Record action="${APP}" maxLength="30" timeout="3"/>`), { store, script: recordReply({ record_ms: '2000', playback_terminator_used: '#' }) })
  const id = store.begun[0] ?? ''
  t.match(id, /^[0-9a-f-]{36}$/, 'a recording id of the store')
  t.same(r.pbx.apps(), ['set playback_terminators=#', 'playback tone_stream://%(250,0,800)', 'unset playback_terminator_used', `record /rec/${DOMAIN}/${id}.wav 30 200 3`])
  t.equal(store.completed.get(id), 2000, "completed with FreeSWITCH's record_ms")
  t.match(r.fetcher.requests[0]?.params, { RecordingId: id, RecordingUrl: `/v1/recordings/${id}/audio`, RecordingDuration: '2', Digits: '#' })
})

t.test('Record: playBeep="false", finishOnKey="" (none); a key not asked for is not Digits; 1.36 s is 2 s', async (t) => {
  const store = new FakeStore()
  store.audioMs = 1360
  const r = await run(t, wrap(`<Record action="${APP}" playBeep="false" finishOnKey=""/>`), { store, script: recordReply({ record_ms: '1360', playback_terminator_used: '5' }) })
  t.same(r.pbx.apps().slice(0, 2), ['set playback_terminators=none', 'unset playback_terminator_used'])
  t.notOk(r.pbx.apps().some((a) => a.startsWith('playback')), 'no beep')
  t.match(r.pbx.apps()[2], / 60 200 5$/, 'defaults: 60 s, 5 s of silence')
  t.match(r.fetcher.requests[0]?.params, { RecordingDuration: '2', Digits: '' })
})

t.test('Record: a key that stopped the beep is not the key that ended the recording', async (t) => {
  const store = new FakeStore()
  store.audioMs = 3000
  const r = await run(t, wrap(`<Record action="${APP}"/>`), {
    store,
    script: (rec): ExecReply | undefined => {
      if (rec.app === 'playback') return { kind: 'complete', vars: { playback_terminator_used: '#' } }
      if (rec.app === 'record') return { kind: 'complete', vars: { record_ms: '3000' } }
      return undefined
    },
  })
  t.match(r.fetcher.requests[0]?.params, { RecordingDuration: '3', Digits: '' })
})

t.test('Record: nothing heard: RecordingDuration=0, no id, and the empty recording is not kept', async (t) => {
  const store = new FakeStore()
  const r = await run(t, wrap(`<Record action="${APP}"/>`), { store, script: recordReply({ record_ms: '0' }) })
  t.same(store.removed, store.begun, 'the record is removed')
  t.match(r.fetcher.requests[0]?.params, { RecordingId: '', RecordingUrl: '', RecordingDuration: '0', Digits: '' })
})

t.test('Record: a Section action and the results as variables', async (t) => {
  const store = new FakeStore()
  store.audioMs = 4000
  const r = await run(t, wrap('<Record action="saved"/><Speak>not here</Speak><Section name="saved"><Speak>{{ RecordingDuration }} s {{ len(RecordingId) }}</Speak></Section>'), {
    store,
    script: recordReply({ record_ms: '4000' }),
  })
  t.ok(r.pbx.apps().includes('speak flite|kal|4 s 36'))
  t.notOk(r.pbx.apps().some((a) => a.includes('not here')))
})

t.test('Record: a store that refuses is a runtime error, and nothing is recorded', async (t) => {
  const store = new FakeStore()
  store.refuse = true
  const r = await run(t, wrap('<Record/>'), { store, script: () => undefined })
  t.notOk(r.pbx.apps().some((a) => a.startsWith('record')))
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('Record: the caller hangs up while recording: the recording is completed from its file, no action', async (t) => {
  const store = new FakeStore()
  store.audioMs = 1000
  const r = await run(t, wrap(`<Record action="${APP}"/>`), { store, script: (rec) => (rec.app === 'record' ? { kind: 'hangup' } : undefined) })
  const id = store.begun[0] ?? ''
  t.ok(store.completed.has(id), 'completed')
  t.equal(store.completed.get(id), undefined, 'its length read from the file')
  t.same(r.fetcher.requests, [])
})

const ASR = { engine: 'unimrcp:mrcp1', params: { 'recognition-mode': 'normal' } }
const detect = (...results: Array<Record<string, string>>) => (rec: ExecRecord): ExecReply | undefined =>
  rec.app === 'play_and_detect_speech' ? { kind: 'complete', vars: results.shift() ?? {} } : undefined

t.test('GetInput: no ivr.asr.engine: a runtime error naming the setting, nothing played', async (t) => {
  const r = await run(t, `<Response><GetInput><Play>a.wav</Play></GetInput></Response>`, { script: () => undefined })
  t.notOk(r.pbx.apps().some((a) => a.startsWith('play_and_detect_speech')))
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('GetInput: the arguments FreeSWITCH gets; speech posts the transcript and its confidence', async (t) => {
  const r = await run(t, wrap(`<GetInput action="${APP}" timeout="7" speechTimeout="9" language="en-US" profanityFilter="true" hints="sales, support desk"><Play>menu.wav</Play></GetInput>`), {
    asr: ASR,
    script: detect({ detect_speech_result: '<?xml version="1.0"?><result><interpretation grammar="g" confidence="0.91"><input mode="speech">support desk</input></interpretation></result>' }),
  })
  t.same(r.pbx.apps(), [
    'set play_and_detect_speech_close_asr=true',
    'set playback_terminators=any',
    'unset playback_terminator_used',
    'play_and_detect_speech /prompts/menu.wav detect:unimrcp:mrcp1 {recognition-mode=normal,start-input-timers=false,no-input-timeout=7000,speech-timeout=9000,speech-language=en-US,profanity-filter=true,speech-hints=sales;support desk}builtin:speech/transcribe',
  ].concat(r.pbx.apps().slice(4)))
  t.match(r.fetcher.requests[0]?.params, { InputType: 'speech', Speech: 'support desk', Confidence: '0.91', Digits: '' })
})

t.test('GetInput: mod_test\'s answer (esl/41): agent at 0.873', async (t) => {
  const r = await run(t, wrap(`<GetInput action="${APP}"/>`), {
    asr: { engine: 'test' },
    script: detect({ detect_speech_result: '{"grammar": "builtin:speech/transcribe", "text": "agent", "confidence": 87.300000}' }),
  })
  t.match(r.pbx.apps()[3], /^play_and_detect_speech silence_stream:\/\/1 detect:test \{start-input-timers=false,no-input-timeout=5000,speech-timeout=5000,speech-language=ja-JP\}builtin:speech\/transcribe$/)
  t.match(r.fetcher.requests[0]?.params, { InputType: 'speech', Speech: 'agent', Confidence: '0.873' })
})

t.test('GetInput: a key stops it (esl/42); the rest is collected as GetDigits does', async (t) => {
  const r = await run(t, wrap(`<GetInput action="${APP}" numDigits="4" interdigitTimeout="3"><Play>menu.wav</Play></GetInput>`), {
    asr: ASR,
    script: (rec): ExecReply | undefined => {
      if (rec.app === 'play_and_detect_speech') return { kind: 'complete', vars: { detect_speech_result: 'DIGIT: 1', playback_terminator_used: '1' } }
      if (rec.app === 'play_and_get_digits') return { kind: 'complete', vars: { cod_ivr_digits: '23' } }
      return undefined
    },
  })
  t.ok(r.pbx.apps().includes('play_and_get_digits 1 3 1 3000 # silence_stream://1 silence_stream://1 cod_ivr_digits . 3000'))
  t.match(r.fetcher.requests[0]?.params, { InputType: 'dtmf', Digits: '123', Speech: '', Confidence: '' })
})

t.test('GetInput: no input, then invalid keys (alert), then speech; a stale terminator does not count', async (t) => {
  const r = await run(t, wrap(`<GetInput maxTries="3" numDigits="1" validDigits="12"><Play>p.wav</Play><Play purpose="alert">bad.wav</Play></GetInput><Speak>[{{ InputType }}:{{ Speech }}:{{ Digits }}]</Speak>`), {
    asr: ASR,
    script: detect(
      { detect_speech_result: '{"grammar": "g", "text": "", "confidence": 0, "error": "no_input"}' },
      { detect_speech_result: 'DIGIT: 9', playback_terminator_used: '9' },
      { detect_speech_result: '{"grammar": "g", "text": "two", "confidence": 50}' },
    ),
  })
  t.equal(r.pbx.apps().filter((a) => a.startsWith('play_and_detect_speech')).length, 3)
  t.equal(r.pbx.apps().filter((a) => a === 'playback /prompts/bad.wav').length, 1, 'the alert after the invalid key only')
  t.equal(r.pbx.apps().at(-1), 'speak flite|kal|[speech:two:]')
})

t.test('GetInput: no result after maxTries: every result is empty and the next element runs', async (t) => {
  const r = await run(t, wrap(`<GetInput maxTries="2" action="${APP}"/><Speak>[{{ InputType }}][{{ Digits }}]</Speak>`), { asr: ASR, script: detect() })
  t.same(r.fetcher.requests, [])
  t.equal(r.pbx.apps().at(-1), 'speak flite|kal|[][]')
})

t.test('GetInput: a prompt holding "detect:" would be cut by FreeSWITCH: a runtime error', async (t) => {
  const r = await run(t, wrap('<GetInput><Speak>please detect: now</Speak></GetInput>'), { asr: ASR, script: detect() })
  t.notOk(r.pbx.apps().some((a) => a.startsWith('play_and_detect_speech')))
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('the speech results FreeSWITCH leaves, read', async (t) => {
  t.same(readSpeechResult('DIGIT: #'), { kind: 'dtmf', key: '#' })
  t.same(readSpeechResult('{"grammar": "g", "text": "agent", "confidence": 87.300000}'), { kind: 'speech', text: 'agent', confidence: 0.873 })
  t.same(readSpeechResult('{"grammar": "g", "text": "", "confidence": 0, "error": "no_input"}'), { kind: 'none', why: 'no_input' })
  t.same(readSpeechResult('<result><interpretation confidence="87"><input mode="speech">yes &amp; no</input></interpretation></result>'), { kind: 'speech', text: 'yes & no', confidence: 0.87 })
  t.same(readSpeechResult('<result><interpretation><input><noinput/></input></interpretation></result>'), { kind: 'none', why: 'no_input' })
  t.same(readSpeechResult('<result><interpretation><input><nomatch/></input></interpretation></result>'), { kind: 'none', why: 'no_match' })
  t.match(readSpeechResult(''), { kind: 'none' })
  t.match(readSpeechResult('{not json'), { kind: 'none', why: 'the result is not JSON' })
  t.match(readSpeechResult('<result><unclosed>'), { kind: 'none' })
  t.match(readSpeechResult('DIGIT: 12'), { kind: 'none' })
})
