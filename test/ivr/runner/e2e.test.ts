/**
 * End to end through the simulator: a phone of the domain dials an extension bound to an XML
 * URL; the simulator asks the daemon's real xml_curl router for the dialplan (answer, set
 * cod_ivr_url, park), the runner sees the CHANNEL_PARK over a real ESL connection (esl-lite),
 * fetches the document from a local HTTP server with the real fetcher, and runs it with sendmsg
 * execute. Simulated time runs 20x faster.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import t, { type Test } from 'tap'
import { domainSchema } from '../../../src/config/schema.js'
import { parseCidrList } from '../../../src/net/address-guard.js'
import { createFetcher } from '../../../src/ivr/fetch/fetcher.js'
import { acceptIvrDocument, createIvrRunner, type IvrRunner } from '../../../src/ivr/runner/index.js'
import { connectPbx, type PbxConnection } from '../../../src/pbx/connection.js'
import { createChannelModel } from '../../../src/channels/index.js'
import { createEngine } from '../../../src/origination/engine.js'
import type { CallbackSink, CallResult } from '../../../src/origination/outcome.js'
import type { Runtime } from '../../../src/runtime/store.js'
import { Simulator } from '../../../src/sim/index.js'
import { silentLogger } from '../../../src/util/logger.js'
import { xmlCurlRouter } from '../../../src/xmlcurl/index.js'
import { runtimeOf } from '../../../src/runtime/store.js'
import { daemonSchema } from '../../../src/config/schema.js'
import { waitFor } from '../../support/wait.js'

const TIME_SCALE = 0.05
const DOMAIN = 'example.test'

const listen = (server: { listen: (port: number, host: string, cb: () => void) => unknown; address: () => AddressInfo | string | null }) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))

/** The application server: documents by path, every request body kept. */
class AppServer {
  readonly docs = new Map<string, string>()
  readonly requests: Array<{ path: string; form: URLSearchParams }> = []
  private readonly server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      this.requests.push({ path, form: new URLSearchParams(body) })
      const doc = this.docs.get(path)
      res.statusCode = doc === undefined ? 404 : 200
      res.setHeader('Content-Type', 'text/xml')
      res.end(doc ?? '')
    })
  })
  port = 0

  async start(t: Test): Promise<void> {
    this.port = await listen(this.server)
    t.teardown(() => new Promise<void>((r) => {
      this.server.closeAllConnections()
      this.server.close(() => r())
    }))
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`
  }
}

interface E2e {
  readonly sim: Simulator
  readonly pbx: PbxConnection
  readonly rt: Runtime
  readonly app: AppServer
  readonly runner: IvrRunner
  /** alice dials the extension; resolves the channel uuid. */
  call(extension: string): Promise<string>
  apps(uuid: string): string[]
  gone(uuid: string): boolean
}

async function setup(t: Test): Promise<E2e> {
  const app = new AppServer()
  await app.start(t)
  const domain = domainSchema.parse({
    name: DOMAIN,
    api_tokens: ['plain-token-for-tests'],
    channel_limit: 20,
    gateway: 'pstn',
    calling_numbers: ['0501230000'],
    users: [
      { id: '1', name: 'alice', extension: '1001', password: 'alice-secret', sim: { terminals: [{ answer_after: 1 }] } },
      { id: '2', name: 'bob', extension: '1002', password: 'bob-secret', sim: { terminals: [{ answer_after: 1 }] } },
      { id: '3', name: 'carol', extension: '1003', password: 'carol-secret', sim: { terminals: [{ behaviour: 'busy' }] } },
    ],
    extensions: [
      { number: '3001', xml_url: app.url('/menu') },
      { number: '3002', xml_url: app.url('/transfer') },
    ],
    sim: { pstn: { default: { answer_after: 1 } } },
  })
  const daemon = daemonSchema.parse({ freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' }, ivr: { media_dir: '/prompts' } })
  const rt = runtimeOf({ file: '/test/daemon.yaml', daemon, domains: [domain] })
  // The xml_curl router needs the runner's IvrHandoff before the runner (which needs the PBX) exists.
  const late: { runner?: IvrRunner } = {}

  const koa = new Koa()
  koa.use(xmlCurlRouter({ runtime: () => rt, logger: silentLogger(), ivr: { has: (d, k) => late.runner?.has(d, k) === true } }).routes())
  const http = createServer(koa.callback())
  const xmlPort = await listen(http)
  t.teardown(() => new Promise<void>((r) => {
    http.closeAllConnections()
    http.close(() => r())
  }))

  const sim = new Simulator({
    domains: [domain],
    password: 'ClueCon',
    timeScale: TIME_SCALE,
    xmlCurl: { url: `http://127.0.0.1:${xmlPort}/freeswitch/xml_curl`, username: 'freeswitch', password: 'xml-curl-secret' },
  })
  const port = await sim.listen(0)
  const pbx = connectPbx({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  const allow = parseCidrList(['127.0.0.0/8'])
  if (!allow.ok) throw new Error(allow.error)
  const fetcher = createFetcher({ allow: allow.value, logger: silentLogger(), accept: acceptIvrDocument })
  const r = createIvrRunner({ pbx, runtime: () => rt, fetcher, logger: silentLogger() })
  late.runner = r
  t.teardown(async () => {
    await r.close()
    await pbx.close()
    await sim.close()
  })
  await waitFor('ESL link up', () => pbx.isConnected())
  return {
    sim,
    pbx,
    rt,
    app,
    runner: r,
    call: (extension) => sim.placeInboundCall({ domain: DOMAIN, fromUser: 'alice', destination: extension }),
    apps: (uuid) => sim.executedApps(uuid).map((a) => (a.arg === '' ? a.app : `${a.app} ${a.arg}`)),
    gone: (uuid) => !sim.liveChannels().some((c) => c.uuid === uuid),
  }
}

const afterPark = (apps: string[]): string[] => apps.slice(apps.indexOf('park') + 1)

t.test('a phone dials an IVR extension: document fetched, prompts, digits, action, hangup', async (t) => {
  const e = await setup(t)
  e.app.docs.set(
    '/menu',
    `<Response><Speak language="en-US">Welcome</Speak><GetDigits action="${e.app.url('/choice')}" numDigits="2" timeout="5"><Play>ivr/menu.wav</Play></GetDigits><Speak>no input</Speak></Response>`,
  )
  e.app.docs.set('/choice', `<Response><Play loop="2">ivr/you-chose.wav</Play><Hangup/></Response>`)
  const uuid = await e.call('3001')
  e.sim.sendDtmf(uuid, '42')
  await waitFor('the call to end', () => e.gone(uuid))
  const apps = e.apps(uuid)
  t.same(apps.slice(apps.indexOf('park') - 2, apps.indexOf('park') + 1), [`set cod_ivr_url=${encodeURIComponent(e.app.url('/menu'))}`, 'set cod_ivr_extension=3001', 'park'], 'the dialplan handed the call over, unanswered')
  t.notOk(apps.slice(0, apps.indexOf('park')).includes('answer'), 'the runner, not the dialplan, answers')
  t.same(afterPark(apps), [
    'answer',
    'speak flite|kal|Welcome',
    'play_and_get_digits 1 2 1 5000 # /prompts/ivr/menu.wav silence_stream://1 cod_ivr_digits . 5000',
    'set playback_terminators=none',
    'playback /prompts/ivr/you-chose.wav',
    'playback /prompts/ivr/you-chose.wav',
  ])
  const [first, second] = e.app.requests
  t.equal(first?.path, '/menu')
  t.equal(first?.form.get('CallUUID'), uuid)
  t.equal(first?.form.get('CalledNumber'), '3001')
  t.equal(first?.form.get('UserName'), 'alice')
  t.equal(first?.form.get('CallStatus'), 'ringing', 'not answered yet when the document is fetched')
  t.equal(second?.path, '/choice')
  t.equal(second?.form.get('Digits'), '42')
  await waitFor('the session to end', () => e.runner.activeSessions() === 0)
})

t.test('Transfer to a busy user runs the failure Section; to a user who answers, the call is connected', async (t) => {
  const e = await setup(t)
  e.app.docs.set(
    '/transfer',
    `<Response><Transfer failureAction="busy" answerTimeout="5">carol</Transfer><Section name="busy"><Speak>{{ TransferFailureReason }}</Speak><Transfer>bob</Transfer></Section></Response>`,
  )
  const uuid = await e.call('3002')
  await waitFor('the bridge to bob', () => e.sim.liveChannels().some((c) => c.uuid === uuid && c.bridgedTo !== undefined))
  const apps = afterPark(e.apps(uuid))
  t.ok(apps.includes('bridge user/carol@example.test'))
  t.ok(apps.includes('speak flite|kal|busy'), 'TransferFailureReason=busy')
  t.equal(apps.filter((a) => a.startsWith('bridge')).length, 2)
  t.equal(e.runner.activeSessions(), 1, 'the session waits while the call is connected')
  e.sim.remoteHangup(uuid)
  await waitFor('the call to end', () => e.gone(uuid))
  await waitFor('the session to end', () => e.runner.activeSessions() === 0)
  t.notOk(e.sim.commands.some((c) => c.text.startsWith(`bgapi uuid_kill ${uuid}`)), 'the runner never hung the connected call up')
})

t.test('the caller hangs up during a prompt: the session ends, nothing more runs', async (t) => {
  const e = await setup(t)
  e.app.docs.set('/menu', `<Response><Wait length="60"/><Speak>never</Speak></Response>`)
  const uuid = await e.call('3001')
  await waitFor('the wait to start', () => e.apps(uuid).includes('sleep 60000'))
  e.sim.remoteHangup(uuid)
  await waitFor('the session to end', () => e.runner.activeSessions() === 0)
  t.notOk(e.apps(uuid).some((a) => a.startsWith('speak')))
  t.notOk(e.sim.commands.some((c) => c.text.startsWith(`bgapi uuid_kill ${uuid}`)))
})

t.test('an invalid document: the URL is told CallStatus=error, the call is hung up', async (t) => {
  const e = await setup(t)
  e.app.docs.set('/menu', `<Response><Speak loop="9">x</Speak></Response>`)
  const uuid = await e.call('3001')
  await waitFor('the call to end', () => e.gone(uuid))
  await waitFor('the report', () => e.app.requests.length >= 2)
  const report = e.app.requests[1]
  t.equal(report?.form.get('CallStatus'), 'error')
  t.match(report?.form.get('Error'), /Speak loop "9"/)
  t.same(afterPark(e.apps(uuid)), [])
})

t.test('an xml_url: destination: registered under the request id, run when the originated leg answers', async (t) => {
  const e = await setup(t)
  const results: CallResult[] = []
  const sink: CallbackSink = { deliver: (_d, _u, result) => void results.push(result) }
  const channels = createChannelModel({ pbx: e.pbx, logger: silentLogger(), directory: () => e.rt.directory })
  const engine = createEngine({ pbx: e.pbx, channels, runtime: () => e.rt, callbacks: sink, logger: silentLogger(), sipProfile: 'internal', huntConcurrency: 4, timeScale: TIME_SCALE, graceMs: 2000 })
  t.teardown(async () => {
    await engine.close()
    channels.close()
  })
  const requestId = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0'
  const source = { kind: 'inline' as const, xml: '<IVR><Speak language="en-US">Your code is {{ CalledNumber }}</Speak></IVR>' }
  e.runner.register(DOMAIN, requestId, source)
  const r = await engine.originate({
    requestId,
    domain: DOMAIN,
    operation: 'call_external',
    originator: { kind: 'pstn', number: '0311112222' },
    destination: { kind: 'ivr', source },
    answerTimeoutSec: 10,
    callbackUrl: 'http://127.0.0.1:9/cb',
  })
  if (!r.ok) return t.fail(r.error.description)
  const uuid = r.value.uuids[0] ?? ''
  await waitFor('the call to end', () => e.gone(uuid) && e.runner.activeSessions() === 0)
  const apps = e.apps(uuid)
  t.ok(apps.includes(`set cod_ivr_request=${requestId}`), 'the dialplan names the source by the request id')
  t.same(afterPark(apps), ['speak flite|kal|Your code is 0311112222'], 'the called number is the number the leg dialled')
  t.notOk(e.runner.has(DOMAIN, requestId), 'the source was used once')
  t.same(results, [{ result_code: 0, uuid }])
})
