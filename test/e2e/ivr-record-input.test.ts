/**
 * Issue 30 items 1-3 through the whole daemon on the simulator: `<Record>` keeps the caller's
 * audio in the recording store and the API serves it; `<GetInput>` returns speech (the
 * simulator answers as mod_test's `test` engine does, test/fixtures/freeswitch/esl/41) and DTMF.
 * The simulated far ends talk (`talk`) or press keys (`dtmf`) as their sim behaviour says.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEMO_AUTH, startHarness, type Harness } from './harness.js'

const hits: { path: string; form: URLSearchParams }[] = []
const app = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    hits.push({ path: (req.url ?? '').split('?')[0] ?? '', form: new URLSearchParams(body) })
    res.writeHead(200, { 'content-type': 'text/xml' }).end('<Response><Hangup/></Response>')
  })
})

let h: Harness
let base: string
t.before(async () => {
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  const dir = await mkdtemp(join(tmpdir(), 'cod-ivr-input-'))
  await mkdir(join(dir, 'domains'))
  const daemon = (await readFile('conf/daemon.yaml', 'utf8')).replace('ivr: { fetch_allow: [] }', 'ivr: { fetch_allow: ["127.0.0.1/32"], asr: { engine: test } }')
  await writeFile(join(dir, 'daemon.yaml'), daemon)
  const domain = (await readFile('conf/domains/example.test.yaml', 'utf8')).replace(
    '    default: { answer_after: 1 }\n',
    '    default: { answer_after: 1 }\n' +
      '    "0355551111": { answer_after: 1, talk: 2 }\n' +
      '    "0355552222": { answer_after: 1, dtmf: "12#" }\n' +
      '    "0355553333": { answer_after: 1 }\n',
  )
  await writeFile(join(dir, 'domains', 'example.test.yaml'), domain)
  h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
})
t.teardown(async () => {
  await h.close()
  app.close()
})

async function runDocument(target: string, xml: string, path: string): Promise<URLSearchParams> {
  const reply = await h.post('call_external', { target, destination: `xml_url:inline_xml://${Buffer.from(xml).toString('base64')}` })
  if (reply.status !== 200) throw new Error(JSON.stringify(reply.body))
  return (await h.waitFor(`a request for ${path}`, () => hits.find((x) => x.path === path), 10_000)).form
}

t.test('Record: 2 s of the caller\'s voice, kept in the recording store and served by the API', async (t) => {
  const form = await runDocument('0355551111', `<Response><Record action="${base}/recorded" maxLength="10" timeout="2"/></Response>`, '/recorded')
  t.equal(form.get('RecordingDuration'), '2')
  const id = form.get('RecordingId') ?? ''
  t.match(id, /^[0-9a-f-]{36}$/)
  t.equal(form.get('RecordingUrl'), `/api/recordings/${id}/audio`)
  t.equal(form.get('Digits'), '')
  const res = await fetch(`${h.daemon.baseUrl}${form.get('RecordingUrl')}`, { headers: { authorization: DEMO_AUTH } })
  t.equal(res.status, 200)
  const wav = Buffer.from(await res.arrayBuffer())
  t.equal(wav.length, 44 + 2 * 8000 * 2, 'a mono 8 kHz WAV of 2 s')
  t.not(wav.readInt16LE(44 + 2 * 10), 0, 'not silence')
  const record = await fetch(`${h.daemon.baseUrl}/api/recordings/${id}`, { headers: { authorization: DEMO_AUTH } })
  t.match(await record.json(), { recording: { id, status: 'completed', duration_ms: 2000 } })
})

t.test('Record: a caller who says nothing: RecordingDuration=0 and nothing kept', async (t) => {
  const form = await runDocument('0355553333', `<Response><Record action="${base}/silent" timeout="1" playBeep="false"/></Response>`, '/silent')
  t.equal(form.get('RecordingDuration'), '0')
  t.equal(form.get('RecordingId'), '')
  const list = await fetch(`${h.daemon.baseUrl}/api/recordings`, { headers: { authorization: DEMO_AUTH } })
  t.notOk(((await list.json()) as { recordings: { duration_ms: number | null }[] }).recordings.some((r) => r.duration_ms === 0), 'no empty recording listed')
})

t.test('Record: the finish key ends it and is posted as Digits', async (t) => {
  const form = await runDocument('0355552222', `<Response><Record action="${base}/keyed" finishOnKey="1"/></Response>`, '/keyed')
  t.equal(form.get('Digits'), '1')
  t.equal(form.get('RecordingDuration'), '0', 'the far end pressed a key, it never talked')
})

t.test('GetInput: speech through the configured engine (mod_test\'s answer)', async (t) => {
  const form = await runDocument('0355551111', `<Response><GetInput action="${base}/speech" hints="agent"><Speak>How can we help?</Speak></GetInput></Response>`, '/speech')
  t.equal(form.get('InputType'), 'speech')
  t.equal(form.get('Speech'), 'agent')
  t.equal(form.get('Confidence'), '0.873')
  t.equal(form.get('Digits'), '')
})

t.test('GetInput: DTMF as GetDigits: 12 then the finish key', async (t) => {
  const form = await runDocument('0355552222', `<Response><GetInput action="${base}/dtmf" numDigits="4"><Speak>Your code?</Speak></GetInput></Response>`, '/dtmf')
  t.equal(form.get('InputType'), 'dtmf')
  t.equal(form.get('Digits'), '12')
  t.equal(form.get('Speech'), '')
})
