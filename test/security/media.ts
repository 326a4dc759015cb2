/**
 * Media confinement from outside (src/ivr/elements/audio-source.ts, docs/ivr.md "Play"): path
 * tricks and the abuse corpus's injections (test/abuse/corpus.ts INJECTIONS, appended to a valid
 * name) as the `<Play>` of inline documents, in every place a Play may stand: each request is
 * `400 invalid_xml` and nothing is originated. The same tricks in documents the test server
 * serves are refused when the call runs (the document is not run). And whatever ran, every
 * playback the simulator was given is a file of the prompt folder or a guarded URL.
 */
import { INJECTIONS } from '../abuse/corpus.js'
import { inlineDocument } from './ssrf.js'
import { apiPost, outcomeOf, pool, type World } from './world.js'

/** Names FreeSWITCH would give a meaning of its own (one of each rule of audio-source.ts). */
const TRICKS: readonly string[] = [
  '/etc/passwd',
  '/dev/zero',
  '../../../etc/shadow',
  'prompts/../../conf/vars.xml',
  '.ssh/id_rsa',
  '~freeswitch/.bashrc',
  'a\\..\\b.wav',
  'C:\\x.wav',
  '%2e%2e%2fetc%2fpasswd',
  'file_string://a.wav!/etc/passwd',
  'shout://203.0.113.9/a.mp3',
  'tone_stream://%(2000,0,350)',
  'local_stream://default',
  'http_cache://http://127.0.0.1/a.wav',
  'phrase:spell,secret',
  'say:en number pronounced 1',
  '{loops=100}a.wav',
  '${base_dir}/conf/freeswitch.xml',
  '$${certs_dir}/agent.pem',
  'a.wav!/etc/passwd',
  'a.wav,/etc/passwd',
  'a.wav|b.wav',
  "a.wav' b",
  'a.wav;b',
  'user@host/a.wav',
  'a b.wav',
  '\u2024\u2024/etc/passwd',
  '\uff0fetc\uff0fpasswd',
  'caf\u00e9.wav',
  'x'.repeat(300),
  'ftp://203.0.113.9/a.wav',
  'file:///etc/passwd',
]

/** Where a Play may stand in a document. */
const PLACES: ReadonlyArray<[string, (play: string) => string]> = [
  ['top level', (p) => `<IVR><Answer/>${p}<Hangup/></IVR>`],
  ['GetDigits prompt', (p) => `<IVR><GetDigits numDigits="1">${p}</GetDigits><Hangup/></IVR>`],
  ['GetDigits alert', (p) => `<IVR><GetDigits numDigits="1"><Speak>x</Speak>${p.replace('<Play>', '<Play purpose="alert">')}</GetDigits></IVR>`],
  ['Section', (p) => `<IVR><GoTo>m</GoTo><Section name="m">${p}</Section></IVR>`],
  ['If branch', (p) => `<IVR><If expr="true"><Then>${p}</Then></If></IVR>`],
]

const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')

const mediaNames = (): string[] => [...TRICKS, ...INJECTIONS.map((i) => `ivr/ok${i}.wav`)]

/** Inline documents: every trick in every place is 400 invalid_xml. */
export async function inlineMedia(w: World): Promise<string[]> {
  const problems: string[] = []
  const cases = mediaNames().flatMap((name) => PLACES.map(([place, doc]) => ({ name, place, xml: doc(`<Play>${xmlText(name)}</Play>`) })))
  const answers = await pool(cases, 8, async (c) => ({ c, a: await w.send(apiPost('call_external', { target: '0311112222', destination: inlineDocument(c.xml) })) }))
  for (const { c, a } of answers) {
    w.tally.count('media paths (inline <Play>)', outcomeOf(a))
    // Control characters in the name make the document invalid XML first: still invalid_xml.
    if (a.status !== 400 || a.errorId !== 'invalid_xml') problems.push(`${c.place} ${JSON.stringify(c.name).slice(0, 60)}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  return problems
}

/** Fetched documents with a refused Play: the document is refused when the call runs. */
export async function fetchedMedia(w: World): Promise<string[]> {
  const problems: string[] = []
  const notRun0 = w.logs.filter((l) => l.msg === 'ivr document not run').length
  const names = ['/etc/passwd', 'file_string://a.wav!/etc/passwd', '${base_dir}/x.wav', '../../x.wav']
  for (const [i, name] of names.entries()) w.docs.route(`/media-${i}`, `<IVR><Answer/><Play>${xmlText(name)}</Play><Hangup/></IVR>`)
  // The positive control: a plain prompt name and a URL on the allowed server are played.
  w.docs.route('/media-ok', `<IVR><Answer/><Play>ivr/ivr-welcome.wav</Play><Play>${w.docs.base}/a.wav</Play><GetJSON var="d" url="${w.docs.base}/media-ok/report"/><Hangup/></IVR>`)
  w.docs.route('/media-ok/report', '{}', 'application/json')
  for (const path of [...names.map((_, i) => `/media-${i}`), '/media-ok']) {
    const a = await w.send(apiPost('call_external', { target: '0311112222', destination: `xml_url:${w.docs.base}${path}` }))
    w.tally.count('media paths (fetched documents)', outcomeOf(a))
    if (a.status !== 200) problems.push(`${path}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  try {
    await w.waitFor('the refused documents', () => w.logs.filter((l) => l.msg === 'ivr document not run').length - notRun0 >= names.length, 20000)
    await w.waitFor('the positive control', () => w.docs.requests.some((r) => r.path === '/media-ok/report'), 20000)
  } catch (e) {
    problems.push(String(e))
  }
  return problems
}

/**
 * Every file the switch was given to play: a prompt-folder file, an http_cache of the allowed
 * server, or one of the daemon's own fixed sounds (silence and tones it writes itself).
 */
export function playbacksConfined(w: World): string[] {
  const docs = w.docs.base.replace(/[.]/g, '\\.')
  const allowed = new RegExp(`^(/prompts/[A-Za-z0-9_][A-Za-z0-9_./-]*|http_cache://${docs}/[^\\s!]*|silence_stream://[0-9]+|tone_stream://[%(),0-9]+)$`)
  const bad: string[] = []
  for (const e of w.sim.executedApps()) {
    if (!/play|broadcast|displace/.test(e.app)) continue
    for (const token of e.arg.replace(/file_string:\/\//g, '').split(/[\s!]/)) {
      if ((token.includes('/') || token.includes(':')) && !allowed.test(token)) bad.push(`${e.app} ${e.arg}`.slice(0, 200))
    }
  }
  return bad
}
