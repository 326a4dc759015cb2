/**
 * Media confined (issue 12 item 2; src/ivr/elements/audio-source.ts): a `<Play>` names an
 * http(s) URL or a plain file of the prompt folder `ivr.media_dir`, nothing else. A corpus of
 * path tricks is refused in every way a document can carry it: inline documents at request
 * time (400 invalid_xml naming the element and the rule), fetched documents and templates at
 * run time (a runtime error the document's error handler sees), and FreeSWITCH never gets one.
 */
import t from 'tap'
import { parseXmlUrl } from '../../src/api/xml-url.js'
import { daemonSchema } from '../../src/config/schema.js'
import { readAudioSource, mediaPath } from '../../src/ivr/elements/audio-source.js'
import { parseIvrDocument } from '../../src/ivr/document/index.js'
import { MEDIA_DIR, MENU_URL, kills, rig, runInline, wrap } from './runner/helpers.js'

/** Names that must never reach FreeSWITCH's file layer, with why (for the test names). */
const PATH_TRICKS: readonly (readonly [string, string])[] = [
  ['/etc/passwd', 'absolute path'],
  ['/dev/urandom', 'a device'],
  ['../../etc/passwd', 'parent folders'],
  ['sounds/../../secret.wav', '.. in the middle'],
  ['./a.wav', 'a . folder'],
  ['..', 'just ..'],
  ['.hidden.wav', 'a hidden file'],
  ['a//b.wav', 'an empty folder name'],
  ['a/', 'a trailing slash'],
  ['%2e%2e/%2e%2e/etc/passwd', 'url-encoded dots'],
  ['%2fetc%2fpasswd', 'url-encoded slashes'],
  ['..%2f..%2fetc%2fpasswd', 'mixed encoding'],
  ['..\\..\\windows\\win.ini', 'backslashes'],
  ['sounds\\a.wav', 'a backslash separator'],
  ['a.wav\u0000.mp3', 'NUL'],
  ['a\nb.wav', 'a line break'],
  ['a\u0085b.wav', 'a C1 control'],
  ['\u2025/\u2025/etc/passwd', 'two-dot leader look-alike'],
  ['\uff0e\uff0e/\uff0e\uff0e/etc/passwd', 'fullwidth dots'],
  ['a\u2215b.wav', 'division slash look-alike'],
  ['\uff0fetc\uff0fpasswd', 'fullwidth solidus'],
  ['caf\u00e9.wav', 'non-ASCII letter'],
  ['~/a.wav', 'home folder'],
  ['~root/.ssh/id_rsa', 'another home'],
  ['C:/Windows/win.ini', 'a drive letter'],
  ['c:\\boot.ini', 'a drive letter with backslash'],
  ['file:///etc/passwd', 'file URL'],
  ['file_string://a.wav!/etc/passwd', 'file_string'],
  ['shout://evil.example.test/a.mp3', 'shout'],
  ['tone_stream://%(1000,0,350)', 'tone_stream'],
  ['silence_stream://1000', 'silence_stream'],
  ['local_stream://moh', 'local_stream'],
  ['http_cache://http://127.0.0.1/a.wav', 'http_cache given directly'],
  ['vlc:///etc/passwd', 'vlc'],
  ['phrase:voicemail_hello', 'a phrase macro'],
  ['say:hello there', 'say: TTS'],
  ['{modname=mod_shout}a.mp3', 'file parameters'],
  ['{timeout=1}/etc/passwd', 'file parameters and an absolute path'],
  ['${system(id)}', 'an expansion'],
  ['$${sounds_dir}/a.wav', 'a global expansion'],
  ['${base_dir}/conf/vars.xml', 'a channel variable'],
  ['a.wav!b.wav', 'file_string separator'],
  ['a.wav,b.wav', 'comma'],
  ['a.wav|b.wav', 'pipe'],
  ['a.wav@@8000', 'seek marker'],
  ["a'b.wav", 'quote'],
  ['a b.wav', 'a space'],
  ['a\tb.wav', 'a tab'],
  ['a;b.wav', 'semicolon'],
  [`${'a'.repeat(101)}.wav`, 'a very long name'],
  [`${'abcdefgh/'.repeat(30)}x.wav`, 'a very long path'],
  ['ftp://example.test/a.wav', 'another scheme'],
  ['javascript:alert(1)', 'a pseudo-scheme'],
]

/** Names that are fine: relative, plain, inside the folder. */
const GOOD_NAMES = ['a.wav', 'ivr/ivr-welcome.wav', 'custom/menu_1.MP3', 'x-y_z.1.wav', 'noext', 'a..b.wav']

const dir = MEDIA_DIR

/** A value as an assertion name: ASCII only (a raw NEL or U+2028 would break the TAP stream). */
const show = (s: string): string => JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

// eslint-disable-next-line no-control-regex -- finding the names that hold control characters is the point
const CONTROL = /[\u0000-\u001f\u0085]/
const CONTROLS = new RegExp(CONTROL.source, 'g')

t.test('the file rule: plain relative names pass and land inside the prompt folder', async (t) => {
  for (const name of GOOD_NAMES) {
    const r = readAudioSource(name)
    t.same(r, { ok: true, value: { kind: 'file', name } }, name)
    t.same(mediaPath(dir, name), { ok: true, value: `${dir}/${name}` }, name)
  }
  t.same(readAudioSource('  https://media.example.test/a.wav  '), { ok: true, value: { kind: 'url', url: 'https://media.example.test/a.wav' } })
})

t.test('the file rule: every path trick is refused, with the rule it broke', async (t) => {
  for (const [name, why] of PATH_TRICKS) {
    const r = readAudioSource(name)
    t.equal(r.ok, false, `${why}: ${show(name)}`)
    if (!r.ok) t.match(r.error, /^must be an audio file path relative to the prompt folder .* or an http or https URL/, why)
    // The run-time join checks the name again, whatever reached it.
    t.equal(mediaPath(dir, name).ok, false, `${why}: refused at the join too`)
  }
})

t.test('the rule names what was wrong', async (t) => {
  const reason = (s: string): string => {
    const r = readAudioSource(s)
    return r.ok ? '' : r.error
  }
  t.match(reason('/etc/passwd'), /is an absolute path/)
  t.match(reason('../x.wav'), /has a "\.\." folder/)
  t.match(reason('file_string://a!b'), /is not an http or https URL \(it names a FreeSWITCH file module/)
  t.match(reason('C:/x.wav'), /drive letter/)
  t.match(reason('${x}'), /contains "\$"/)
  t.match(reason('{a=b}x.wav'), /file parameters/)
  t.match(reason('%2e%2e/x'), /not percent-decoded/)
  t.match(reason('a\\b'), /backslash/)
  t.match(reason('a\u0000b'), /control character/)
  t.match(reason('\uff0e\uff0e/x'), /outside A-Z a-z 0-9 _ \. -/)
  t.match(reason('a.wav!b.wav'), /separators FreeSWITCH interprets/)
})

t.test('the prompt folder must itself be a plain absolute folder', async (t) => {
  for (const bad of ['', 'relative/dir', '/a/../b', '/a/./b', '/a/', '/a b', '/a/${x}', '//a']) {
    t.equal(mediaPath(bad, 'a.wav').ok, false, `mediaPath refuses ${show(bad)}`)
    const cfg = daemonSchema.safeParse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: 'fs', password: 'xml-curl-secret' }, ivr: { media_dir: bad } })
    t.equal(cfg.success, false, `config refuses ivr.media_dir ${show(bad)}`)
  }
  const cfg = daemonSchema.parse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: 'fs', password: 'xml-curl-secret' } })
  t.equal(cfg.ivr.media_dir, '/usr/share/freeswitch/sounds/en/us/callie', 'the default: the vanilla sound_prefix of a packaged FreeSWITCH')
})

t.test('inline documents: every trick is 400 invalid_xml at request time, naming the element and the rule', async (t) => {
  const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
  for (const [name, why] of PATH_TRICKS) {
    // Control characters cannot be written in XML at all (refused earlier, still invalid_xml).
    const xml = wrap(`<Play>${escape(name)}</Play>`)
    const r = parseXmlUrl(`inline_xml://${Buffer.from(xml).toString('base64')}`, 'destination')
    t.equal(r.ok, false, why)
    if (r.ok) continue
    t.equal(r.error.id, 'invalid_xml', why)
    if (!CONTROL.test(name)) t.match(r.error.description, /\/IVR\/Play\[1\]\): Play text .*must be an audio file path relative to the prompt folder/, why)
  }
  // Inside GetDigits, as a prompt or an alert.
  for (const inner of ['<GetDigits><Play>/etc/passwd</Play></GetDigits>', '<GetDigits><Play purpose="alert">../x.wav</Play></GetDigits>']) {
    const r = parseIvrDocument(wrap(inner))
    t.equal(r.ok, false, inner)
    if (!r.ok) t.match(r.error.reason, /GetDigits\[1\]\/Play\[1\]\): Play text .*must be an audio file path/, inner)
  }
})

t.test('templates: a path trick rendered at run time is a runtime error, the error handler runs, nothing is played', async (t) => {
  for (const [name, why] of PATH_TRICKS.slice(0, 20)) {
    const doc = wrap(
      `<Set var="f" val="${name.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(CONTROLS, 'x/../')}"/>` +
        '<SetErrorHandler>oops</SetErrorHandler><Play>{{ f }}</Play><Speak>not reached</Speak>' +
        '<Section name="oops"><Speak>handled</Speak></Section>',
    )
    const r = await runInline(t, doc)
    t.notOk(
      r.pbx.apps().some((a) => a.startsWith('playback')),
      `${why}: nothing handed to playback`,
    )
    t.same(r.pbx.apps().at(-1), 'speak flite|kal|handled', `${why}: the error handler ran`)
  }
  // The same inside GetDigits.
  const g = await runInline(t, wrap('<Set var="f" val="/etc/passwd"/><GetDigits><Play>{{ f }}</Play></GetDigits><Speak>not reached</Speak>'))
  t.same(g.pbx.apps(), [], 'no prompt handed over')
  t.same(kills(g), ['NORMAL_TEMPORARY_FAILURE'], 'no handler: the call ends')
})

t.test('fetched documents: one naming a refused file is refused as a whole (a runtime error of the document that asked for it)', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set(MENU_URL, wrap('<SetErrorHandler>oops</SetErrorHandler><Redirect>https://ivr.example.test/next</Redirect><Section name="oops"><Speak>handled {{ Error }}</Speak></Section>'))
  r.fetcher.docs.set('https://ivr.example.test/next', wrap('<Play>/etc/passwd</Play>'))
  r.parkExtension()
  await r.settle()
  t.notOk(r.pbx.apps().some((a) => a.includes('passwd') && a.startsWith('playback')), 'nothing played')
  t.match(r.pbx.apps().at(-1), /^speak flite\|kal\|handled .*is an absolute path/, 'the error handler of the asking document ran')
  t.ok(
    r.fetcher.reports.some((x) => x.url === 'https://ivr.example.test/next'),
    'the URL that served the refused document is told why',
  )
})

t.test('good names play from the prompt folder; URLs still go through the address check', async (t) => {
  const r = await runInline(t, wrap('<Play>ivr/ivr-welcome.wav</Play><GetDigits><Play>menu/a.wav</Play></GetDigits>'))
  t.same(r.pbx.apps().slice(0, 3), [
    'set playback_terminators=none',
    `playback ${dir}/ivr/ivr-welcome.wav`,
    `play_and_get_digits 1 99 1 5000 # ${dir}/menu/a.wav silence_stream://1 cod_ivr_digits . 5000`,
  ])
  const u = await runInline(t, wrap('<Play>http://internal.example.test/a.wav</Play>'), { blockedHosts: ['internal.example.test'] })
  t.same(u.pbx.apps(), [], 'a refused address: nothing played')
})
