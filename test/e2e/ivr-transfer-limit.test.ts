/**
 * docs/engine.md "Channel limit": an IVR's `<Transfer>` runs its bridge on the IVR's channel, not
 * through the daemon's dialplan, so the limit asks before it rings (ivr/transfer-gate.ts). A
 * call_external to an inline IVR is admitted with two channels (the PSTN leg and one destination
 * slot); a Transfer to alice rings her two terminals, three channels in all. Under a limit of 2 the
 * Transfer fails as a refused bridge does (NORMAL_CIRCUIT_CONGESTION → TransferFailureReason
 * `failed`), no bridge is run, and the document goes on in its failureAction; under 3 it rings.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile, mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startHarness, type Harness } from './harness.js'

const failures: URLSearchParams[] = []
const app = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    failures.push(new URLSearchParams(body))
    res.writeHead(200, { 'content-type': 'text/xml' }).end('<Response><Hangup/></Response>')
  })
})

let h: Harness
let base: string
let dir: string
let domainYaml: string
const domainFile = () => join(dir, 'domains', 'example.test.yaml')
const withLimit = (n: number) => domainYaml.replace(/^channel_limit: \d+$/m, `channel_limit: ${n}`)

t.before(async () => {
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  dir = await mkdtemp(join(tmpdir(), 'cod-ivr-limit-'))
  await mkdir(join(dir, 'domains'))
  const daemon = (await readFile('conf/daemon.yaml', 'utf8')).replace('ivr: { fetch_allow: [] }', 'ivr: { fetch_allow: ["127.0.0.1/32"] }')
  await writeFile(join(dir, 'daemon.yaml'), daemon)
  domainYaml = await readFile('conf/domains/example.test.yaml', 'utf8')
  await writeFile(domainFile(), withLimit(2))
  h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
})
t.teardown(async () => {
  await h.close()
  app.close()
  await rm(dir, { recursive: true, force: true })
})

const transferToAlice = () =>
  `<Response><Transfer failureAction="onfail">alice</Transfer><Section name="onfail"><Redirect>${base}/after-failure</Redirect></Section></Response>`

async function callExternal(t: Test): Promise<string> {
  const destination = `xml_url:inline_xml://${Buffer.from(transferToAlice()).toString('base64')}`
  const reply = await h.post('call_external', { target: '0355551234', destination, callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  return (reply.body['uuids'] as string[])[0] ?? ''
}

const aliceLegs = () => h.daemon.simulator?.liveChannels().filter((c) => /alice@/.test(c.name)) ?? []

t.test('limit 2: the Transfer to two terminals is refused before anything rings, the document goes on', async (t) => {
  failures.length = 0
  const a = await callExternal(t)
  const hit = await h.waitFor('the failureAction', () => failures[0], 10_000)
  t.equal(hit.get('TransferFailureReason'), 'failed', 'reported as a failed bridge')
  t.equal(hit.get('CallUUID'), a)
  const apps = h.daemon.simulator?.executedApps(a).map((x) => x.app) ?? []
  t.notOk(apps.includes('bridge'), `no bridge was run (apps: ${apps.join(', ')})`)
  t.same(aliceLegs(), [], 'no leg of alice was created')
  await h.waitFor('the call ended', () => h.daemon.simulator?.liveChannels().length === 0, 10_000)
  // Nothing stays held once the call ended: the next call is admitted under the same limit.
  failures.length = 0
  await callExternal(t)
  await h.waitFor('its failureAction too', () => failures[0], 10_000)
  await h.waitFor('that call ended', () => h.daemon.simulator?.liveChannels().length === 0, 10_000)
})

t.test('limit 3: the same Transfer fits and rings both of her terminals', async (t) => {
  await writeFile(domainFile(), withLimit(3))
  const reloaded = await h.daemon.reload()
  t.ok(reloaded.ok, 'reloaded')
  failures.length = 0
  const a = await callExternal(t)
  await h.waitFor('alice bridged to the caller', () => h.daemon.simulator?.liveChannels().find((c) => c.bridgedTo === a && /alice@/.test(c.name)), 10_000)
  t.same(failures, [], 'no failureAction')
  h.daemon.simulator?.remoteHangup(a)
  await h.waitFor('the call ended', () => h.daemon.simulator?.liveChannels().length === 0, 10_000)
})
