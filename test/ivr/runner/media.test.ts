/** Answer, Play, Speak, Wait, and how prompts are written for FreeSWITCH (elements/media.ts). */
import t from 'tap'
import { app } from '../../../src/pbx/commands.js'
import { audioFile, fetchableUrl, fliteVoice, promptText, speakText } from '../../../src/ivr/elements/index.js'
import { kills, runInline, wrap } from './helpers.js'

t.test('flite voices: names, generic names, languages', async (t) => {
  t.equal(fliteVoice('ja-JP', undefined), 'kal', 'default language: flite has no Japanese voice, kal')
  t.equal(fliteVoice('en-US', 'SLT'), 'slt', 'flite names in any case')
  t.equal(fliteVoice('en-US', 'awb'), 'awb')
  t.equal(fliteVoice('en-US', 'kal16'), 'kal16')
  t.equal(fliteVoice('en-US', 'female'), 'slt')
  t.equal(fliteVoice('en-US', 'man'), 'rms')
  t.equal(fliteVoice('en-GB', undefined), 'awb')
  t.equal(fliteVoice('en-IE', 'Mizuki'), 'awb', 'unknown voices fall back to the language')
  t.equal(fliteVoice('ja-JP', 'constructor'), 'kal', 'prototype names are not voices')
  t.equal(fliteVoice('en-US', undefined), 'kal')
})

t.test('speak text cannot expand, set TTS parameters or break the line', async (t) => {
  const attack = '{volume=9}Hi ${system(rm -rf /)} \\$${x}\nnext\tline'
  const s = speakText(attack)
  t.notMatch(s, /[$\\\n\t{}]/)
  t.equal(s, '(volume=9)Hi (system(rm -rf /)) (x) next line')
  t.ok(app('speak', `flite|kal|${s}`).ok, 'the application builder accepts the result')
  t.equal(promptText("Don't press 1! Or 'two'"), 'Dont press 1. Or two', 'no quotes or ! inside file strings')
  t.equal(speakText('   '), '')
  const long = speakText('word '.repeat(2000))
  t.ok(long.length <= 3000 && long.endsWith('word'), 'long text is cut at a word')
})

t.test('audio URLs: through mod_http_cache, characters with a meaning to FreeSWITCH encoded', async (t) => {
  t.same(audioFile({ kind: 'file', name: 'sounds/hello.wav' }, '/prompts'), { ok: true, value: '/prompts/sounds/hello.wav' })
  const u = audioFile({ kind: 'url', url: "https://media.example.test/a b/x!y'z$(1)@@2.wav?q={v}|w#frag" }, '/prompts')
  t.ok(u.ok)
  if (!u.ok) return
  t.equal(u.value, 'http_cache://https://media.example.test/a%20b/x%21y%27z%24%281%29%40%402.wav?q=%7Bv%7D%7Cw')
  const cred = fetchableUrl('http://us$er:p@ss@media.example.test/a.wav')
  t.ok(cred.ok && !cred.value.includes('$') && cred.value.startsWith('http://us%24er:p%40ss@media.example.test/'))
  t.notOk(fetchableUrl('ftp://x/y').ok)
  t.notOk(fetchableUrl('not a url').ok)
})

t.test('Answer answers once; an answered call is not answered again', async (t) => {
  const r = await runInline(t, wrap('<Answer/><Answer/>'), { answered: false })
  t.same(r.pbx.apps(), ['answer'])
  t.same(kills(r), ['NORMAL_CLEARING'], 'the document ended: hung up')
  const a = await runInline(t, wrap('<Answer/>'), { answered: true })
  t.same(a.pbx.apps(), [])
})

t.test('Play: defaults (no terminators, once), answers first', async (t) => {
  const r = await runInline(t, wrap('<Play>ivr/welcome.wav</Play>'), { answered: false })
  t.same(r.pbx.apps(), ['answer', 'set playback_terminators=none', 'playback /prompts/ivr/welcome.wav'])
})

t.test('Play: loop and terminators; a terminator stops the loop', async (t) => {
  const r = await runInline(t, wrap('<Play loop="3" terminators="#*">a.wav</Play><Play loop="2">b.wav</Play>'))
  t.same(r.pbx.apps(), [
    'set playback_terminators=#*',
    'playback /prompts/a.wav',
    'playback /prompts/a.wav',
    'playback /prompts/a.wav',
    'set playback_terminators=none',
    'playback /prompts/b.wav',
    'playback /prompts/b.wav',
  ])
  const s = await runInline(t, wrap('<Play loop="3" terminators="#">a.wav</Play><Speak>after</Speak>'), {
    script: (rec, i) => (rec.app === 'playback' && i === 2 ? { kind: 'complete', vars: { playback_terminator_used: '#' } } : undefined),
  })
  t.same(s.pbx.apps(), ['set playback_terminators=#', 'playback /prompts/a.wav', 'playback /prompts/a.wav', 'speak flite|kal|after'], 'stopped by # on the 2nd play')
})

t.test('Play: an http URL is played through http_cache', async (t) => {
  const r = await runInline(t, wrap('<Play>https://media.example.test/hello.wav</Play>'))
  t.same(r.pbx.apps().slice(-1), ['playback http_cache://https://media.example.test/hello.wav'])
})

t.test('Play and GetDigits prompts: a media URL the fetch rules refuse is a runtime error, FreeSWITCH never gets it', async (t) => {
  // Found on a real FreeSWITCH: mod_http_cache downloads prompt URLs itself, so without this
  // check a document could make it fetch loopback/private addresses the daemon refuses.
  const r = await runInline(t, wrap('<Play>http://internal.example.test/secret.wav</Play><Speak>not reached</Speak>'), {
    blockedHosts: ['internal.example.test'],
  })
  t.notOk(r.pbx.apps().some((a) => a.includes('internal.example.test')), 'nothing played')
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  const g = await runInline(t, wrap('<GetDigits><Play>http://internal.example.test/menu.wav</Play></GetDigits><Speak>not reached</Speak>'), {
    blockedHosts: ['internal.example.test'],
  })
  t.notOk(g.pbx.apps().some((a) => a.includes('internal.example.test')), 'no prompt handed over')
  t.same(kills(g), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('Play: a missing file is a runtime error (call ends, or the error handler runs)', async (t) => {
  const missing = (rec: { app: string }) => (rec.app === 'playback' ? { kind: 'complete' as const, response: 'FILE NOT FOUND' } : undefined)
  const r = await runInline(t, wrap('<Play>nope.wav</Play><Speak>not reached</Speak>'), { script: missing })
  t.same(r.pbx.apps(), ['set playback_terminators=none', 'playback /prompts/nope.wav'])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
  const h = await runInline(
    t,
    wrap('<SetErrorHandler>oops</SetErrorHandler><Play>nope.wav</Play><Speak>not reached</Speak><Section name="oops"><Speak>Sorry {{ Error }}</Speak></Section>'),
    { script: missing },
  )
  const last = h.pbx.apps().at(-1) ?? ''
  t.match(last, /^speak flite\|kal\|Sorry line 1, column \d+ \(\/IVR\/Play\[1\]\): Play: file not found: nope\.wav$/)
  t.same(kills(h), ['NORMAL_CLEARING'], 'the handler Section ended normally')
  const e = await runInline(t, wrap('<Play>x.wav</Play>'), {
    script: (rec) => (rec.app === 'playback' ? { kind: 'complete', response: 'PLAYBACK ERROR' } : undefined),
  })
  t.same(kills(e), ['NORMAL_TEMPORARY_FAILURE'], 'PLAYBACK ERROR too')
})

t.test('Play: a template giving an unsafe path is a runtime error, nothing is played', async (t) => {
  const r = await runInline(t, wrap(`<Set var="f" val="../../etc/passwd"/><Play>{{ f }}</Play>`))
  t.same(r.pbx.apps(), [])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('Speak: language/voice mapping, loop, neutralised text', async (t) => {
  const r = await runInline(
    t,
    wrap('<Speak>こんにちは</Speak><Speak language="en-US" voice="slt" loop="2">Hello {{ CallingNumber }}</Speak><Speak language="en-GB">A ${x}</Speak>'),
    { answered: false },
  )
  t.same(r.pbx.apps(), [
    'answer',
    'speak flite|kal|こんにちは',
    'speak flite|slt|Hello 1001',
    'speak flite|slt|Hello 1001',
    'speak flite|awb|A (x)',
  ])
})

t.test('Speak: nothing left to say is skipped (and does not answer)', async (t) => {
  const r = await runInline(t, wrap(`<Set var="e" val=" "/><Speak>{{ e }}</Speak>`), { answered: false })
  t.same(r.pbx.apps(), [])
})

t.test('Wait: answers first, sleeps in ms, fractions allowed; length 0 just answers', async (t) => {
  const r = await runInline(t, wrap('<Wait/><Wait length="0.25"/><Wait length="0"/>'), { answered: false })
  t.same(r.pbx.apps(), ['answer', 'sleep 1000', 'sleep 250'])
})

t.test('an application FreeSWITCH refuses is a runtime error', async (t) => {
  const r = await runInline(t, wrap('<Speak>hi</Speak><Speak>not reached</Speak>'), {
    script: () => ({ kind: 'fail', error: { kind: 'timeout' } }),
  })
  t.same(r.pbx.apps(), ['speak flite|kal|hi'])
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})
