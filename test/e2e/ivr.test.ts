/**
 * Issue 7, "Done when", through the whole daemon: the HTTP API, the engine over ESL, the
 * simulator running the daemon's dialplan, the IVR runner driving the parked leg, and a local
 * HTTP server playing the IVR author's application server.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startHarness, type Harness } from './harness.js'

interface Hit {
  readonly path: string
  readonly form: URLSearchParams
}
const hits: Hit[] = []
/** Documents the application server answers, by path. */
const documents: Record<string, string> = {
  '/start': '<Response><GetDigits action="/digits" numDigits="1" timeout="5"><Speak>Press 1 for Bob</Speak></GetDigits></Response>',
  '/digits': '<Response><Transfer>bob</Transfer></Response>',
  '/ext': '<IVR><Speak>Welcome</Speak><Hangup/></IVR>',
  '/busy-then-report': '<Response><Transfer failureAction="onfail">carol</Transfer><Section name="onfail"><Redirect>/after-failure</Redirect></Section></Response>',
  '/after-failure': '<Response><Hangup/></Response>',
  '/error-handled': '<Response><SetErrorHandler>oops</SetErrorHandler><Redirect>/broken</Redirect><Section name="oops"><Redirect>/handled</Redirect></Section></Response>',
  '/handled': '<Response><Hangup/></Response>',
}
const app = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    hits.push({ path, form: new URLSearchParams(body) })
    const doc = documents[path]
    if (doc === undefined) return res.writeHead(500).end('no such document')
    res.writeHead(200, { 'content-type': 'text/xml' }).end(doc)
  })
})

let h: Harness
let base: string
t.before(async () => {
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  for (const k of Object.keys(documents)) documents[k] = (documents[k] ?? '').replace(/(action="|>)\//g, `$1${base}/`)
  // The shipped configuration, with the local application server allowed and an extension bound to it.
  const dir = await mkdtemp(join(tmpdir(), 'cod-ivr-'))
  await mkdir(join(dir, 'domains'))
  const daemon = (await readFile('conf/daemon.yaml', 'utf8')).replace('ivr: { fetch_allow: [] }', 'ivr: { fetch_allow: ["127.0.0.1/32"] }')
  await writeFile(join(dir, 'daemon.yaml'), daemon)
  const domain = (await readFile('conf/domains/example.test.yaml', 'utf8'))
    .replace('extensions:\n', `extensions:\n  - { number: "3002", xml_url: "${base}/ext" }\n`)
    .replace('    default: { answer_after: 1 }\n', '    default: { answer_after: 1 }\n    "0355556666": { answer_after: 1, dtmf: "1" }\n')
  await writeFile(join(dir, 'domains', 'example.test.yaml'), domain)
  h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
})
t.teardown(async () => {
  await h.close()
  app.close()
})

const waitHit = (path: string) => h.waitFor(`a request for ${path}`, () => hits.find((x) => x.path === path), 8000)
const bridgedTo = (a: string, name: RegExp) => () =>
  h.daemon.simulator?.liveChannels().find((c) => c.bridgedTo === a && name.test(c.name))

async function callExternal(t: Test, target: string, destination: string): Promise<string> {
  const reply = await h.post('call_external', { target, destination, callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuid = (reply.body['uuids'] as string[])[0] ?? ''
  const cb = await h.waitFor('the callback', () => h.callbacks.find((c) => (c.body as { uuid?: string }).uuid === uuid))
  t.same(cb.body, { result_code: 0, uuid }, 'the callback reports the answered target leg')
  return uuid
}

t.test('inline document: Speak + GetDigits(action) → the server gets Digits → Transfer to bob', async (t) => {
  hits.length = 0
  const xml = `<Response><GetDigits action="${base}/digits" numDigits="1" timeout="5"><Speak>Press 1 for Bob</Speak></GetDigits></Response>`
  const a = await callExternal(t, '0355556666', `xml_url:inline_xml://${Buffer.from(xml).toString('base64')}`)
  const hit = await waitHit('/digits')
  t.equal(hit.form.get('Digits'), '1', 'the digits the caller pressed')
  t.equal(hit.form.get('CallUUID'), a)
  t.equal(hit.form.get('DomainName'), 'example.test')
  await h.waitFor('bob bridged to the caller', bridgedTo(a, /bob@/), 8000)
  const apps = h.daemon.simulator?.executedApps(a).map((x) => x.app) ?? []
  t.ok(apps.includes('speak') || apps.includes('play_and_get_digits'), 'the prompt was spoken')
  h.daemon.simulator?.remoteHangup(a)
})

t.test('the same flow with the document fetched by URL', async (t) => {
  hits.length = 0
  const a = await callExternal(t, '0355556666', `xml_url:${base}/start`)
  const start = await waitHit('/start')
  t.equal(start.form.get('CallStatus'), 'in-progress')
  t.equal((await waitHit('/digits')).form.get('Digits'), '1')
  await h.waitFor('bob bridged to the caller', bridgedTo(a, /bob@/), 8000)
  h.daemon.simulator?.remoteHangup(a)
})

t.test('an extension bound to an XML URL, reached by an inbound call from a phone', async (t) => {
  hits.length = 0
  const uuid = await h.daemon.simulator?.placeInboundCall({ domain: 'example.test', fromUser: 'alice', destination: '3002' })
  const hit = await waitHit('/ext')
  t.equal(hit.form.get('CallUUID'), uuid)
  t.equal(hit.form.get('Direction'), 'inbound')
  await h.waitFor('the document hangs up', () => h.daemon.simulator?.liveChannels().every((c) => c.uuid !== uuid))
})

t.test('a Transfer to a busy user runs its failureAction with TransferFailureReason', async (t) => {
  hits.length = 0
  await callExternal(t, '0399990000', `xml_url:${base}/busy-then-report`)
  const hit = await waitHit('/after-failure')
  t.equal(hit.form.get('TransferFailureReason'), 'busy')
})

t.test('a runtime error (a failed fetch) goes to the SetErrorHandler Section', async (t) => {
  hits.length = 0
  await callExternal(t, '0399990000', `xml_url:${base}/error-handled`)
  await waitHit('/broken')
  const handled = await waitHit('/handled')
  t.ok(handled, 'the handler section ran')
})

t.test('document URLs on loopback are refused unless the operator allows them', async (t) => {
  // The shipped configuration allows nothing: the fetch is refused and the URL's server never hears of it.
  const { startHarness: start } = await import('./harness.js')
  const strict = await start()
  t.teardown(() => strict.close())
  hits.length = 0
  const reply = await strict.post('call_external', { target: '0399990000', destination: `xml_url:${base}/start`, callback_url: strict.callbackUrl })
  t.equal(reply.status, 200)
  const a = (reply.body['uuids'] as string[])[0] ?? ''
  await strict.waitFor('the refused call to end', () => strict.daemon.simulator?.executedApps(a).some((x) => x.app === 'park') && strict.daemon.simulator.liveChannels().every((c) => c.uuid !== a), 8000)
  t.equal(hits.length, 0, 'nothing reached the loopback server')
})
