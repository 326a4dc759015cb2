/** GetDigits: arguments of play_and_get_digits, tries, alerts, valid digits, finish key, action. */
import t from 'tap'
import type { ExecReply, ExecRecord } from '../../support/fake-pbx.js'
import { kills, runInline, wrap } from './helpers.js'

/** play_and_get_digits answers with these inputs in turn ('' = nothing entered). */
const inputs =
  (...values: string[]) =>
  (rec: ExecRecord): ExecReply | undefined => {
    if (rec.app !== 'play_and_get_digits') return undefined
    const v = values.shift() ?? ''
    return v === '' ? { kind: 'complete' } : { kind: 'complete', vars: { cod_ivr_digits: v } }
  }

const pagd = (r: { pbx: { apps(): string[] } }) => r.pbx.apps().filter((a) => a.startsWith('play_and_get_digits'))

t.test('defaults: 1-99 digits, 5 s, # finishes, one try; no prompt plays "silence"', async (t) => {
  const r = await runInline(t, wrap('<GetDigits/><Speak>You pressed {{ Digits }}</Speak>'), { script: inputs('42'), answered: false })
  t.same(r.pbx.apps(), [
    'answer',
    'play_and_get_digits 1 99 1 5000 # silence silence_stream://1 cod_ivr_digits . 5000',
    'speak flite|kal|You pressed 42',
  ])
})

t.test('attributes and prompts: files, quoted TTS, silence, beep', async (t) => {
  const r = await runInline(
    t,
    wrap(
      '<GetDigits timeout="7" interdigitTimeout="2" finishOnKey="*" numDigits="4" playBeep="true">' +
        '<Play loop="2">menu.wav</Play><Speak language="en-US">Press one, or two!</Speak><Wait length="0.5"/></GetDigits>',
    ),
    { script: inputs('12') },
  )
  t.same(pagd(r), [
    "play_and_get_digits 1 4 1 7000 * 'file_string:///prompts/menu.wav!/prompts/menu.wav!tts://flite|kal|Press one, or two.!silence_stream://500!tone_stream://%(250,0,800)' silence_stream://1 cod_ivr_digits . 2000",
  ])
})

t.test('finishOnKey="" means no finish key (FreeSWITCH would default to #)', async (t) => {
  const r = await runInline(t, wrap('<GetDigits finishOnKey="" numDigits="1"><Play>a.wav</Play></GetDigits>'), { script: inputs('5') })
  t.same(pagd(r), ['play_and_get_digits 1 1 1 5000 none /prompts/a.wav silence_stream://1 cod_ivr_digits . 5000'])
})

t.test('no input: the next try, no alert; after maxTries Digits is empty and the next element runs', async (t) => {
  const r = await runInline(
    t,
    wrap('<GetDigits maxTries="3" action="https://app.example.test/next"><Play>p.wav</Play><Play purpose="alert">bad.wav</Play></GetDigits><Speak>got [{{ Digits }}]</Speak>'),
    { script: inputs('', '', '') },
  )
  t.equal(pagd(r).length, 3)
  t.notOk(r.pbx.apps().includes('playback /prompts/bad.wav'), 'no alert after no input')
  t.equal(r.pbx.apps().at(-1), 'speak flite|kal|got []')
  t.same(r.fetcher.requests, [], 'no input: the action is not fetched')
})

t.test('invalid input: the alert prompts, then the next try; valid input wins', async (t) => {
  const r = await runInline(
    t,
    wrap(
      '<GetDigits maxTries="3" validDigits="123"><Play>p.wav</Play><Speak purpose="alert">Only one, two or three</Speak><Play purpose="alert">bad.wav</Play></GetDigits><Speak>{{ Digits }}</Speak>',
    ),
    { script: inputs('9', '', '2') },
  )
  t.same(r.pbx.apps(), [
    'play_and_get_digits 1 99 1 5000 # /prompts/p.wav silence_stream://1 cod_ivr_digits . 5000',
    'playback file_string://tts://flite|kal|Only one, two or three!/prompts/bad.wav',
    'play_and_get_digits 1 99 1 5000 # /prompts/p.wav silence_stream://1 cod_ivr_digits . 5000',
    'play_and_get_digits 1 99 1 5000 # /prompts/p.wav silence_stream://1 cod_ivr_digits . 5000',
    'speak flite|kal|2',
  ])
})

t.test('invalid input on every try: Digits is empty, next element; without alerts nothing extra plays', async (t) => {
  const r = await runInline(t, wrap('<GetDigits maxTries="2" validDigits="0"/><Speak>[{{ Digits }}]</Speak>'), { script: inputs('1', '*') })
  t.equal(pagd(r).length, 2)
  t.equal(r.pbx.apps().length, 3)
  t.equal(r.pbx.apps().at(-1), 'speak flite|kal|[]')
})

t.test('action: POST with Digits; the fetched document replaces this one', async (t) => {
  const next = 'https://app.example.test/next'
  const r = await runInline(t, wrap(`<GetDigits action="https://down.example.test/x, ${next}"/><Speak>not reached</Speak>`), {
    script: inputs('7'),
  })
  // No document was served: the fetch failed, a runtime error ends the call.
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  t.equal(r.fetcher.requests.length, 1)
  t.same(r.fetcher.requests[0]?.urls, ['https://down.example.test/x', next], 'the comma list is the fallback list')

  const ok = await runInline(t, wrap(`<GetDigits action="${next}"/><Speak>not reached</Speak>`), {
    script: inputs('7'),
    docs: { [next]: wrap('<Speak>menu {{ Digits }}</Speak>') },
  })
  t.same(ok.pbx.apps().slice(1), ['speak flite|kal|menu 7'])
  const req = ok.fetcher.requests[0]
  t.equal(req?.method, 'POST')
  t.equal(req?.params.Digits, '7')
  t.equal(req?.params.CallStatus, 'in-progress')
})

t.test('template values are checked when the element runs', async (t) => {
  const r = await runInline(t, wrap('<Set var="n" val="abc"/><GetDigits numDigits="{{ n }}"/>'))
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('one Speak as the prompt: say:<text> with the channel\'s tts_engine/tts_voice (FreeSWITCH 1.10.12 has no tts:// format)', async (t) => {
  const r = await runInline(t, wrap('<GetDigits numDigits="1"><Speak voice="slt">Press 1, for Bob!</Speak></GetDigits>'), { script: inputs('1') })
  t.same(r.pbx.apps().slice(-3), [
    'set tts_engine=flite',
    'set tts_voice=slt',
    "play_and_get_digits 1 1 1 5000 # 'say:Press 1, for Bob.' silence_stream://1 cod_ivr_digits . 5000",
  ])
  const looped = await runInline(t, wrap('<GetDigits numDigits="1"><Speak loop="2">Again</Speak></GetDigits>'), { script: inputs('1') })
  t.match(pagd(looped)[0], /file_string:\/\/tts:\/\/flite\|kal\|Again!tts:\/\//, 'looped: still a file string (not playable on 1.10.12, docs/ivr.md)')
  t.notOk(looped.pbx.apps().some((a) => a.startsWith('set tts_')))
})
