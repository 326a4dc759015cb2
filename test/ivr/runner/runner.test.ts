/** The runner: registered sources, which parked channels it takes, cleanup on hangup, close(). */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { SourceRegistry } from '../../../src/ivr/runner/index.js'
import type { FetchedDocument, FetchError, HttpMethod } from '../../../src/ivr/fetch/fetcher.js'
import type { Result } from '../../../src/util/result.js'
import { FakeFetcher } from './fakes.js'
import { DOMAIN, MENU_URL, kills, phoneHeaders, phoneVars, rig, wrap } from './helpers.js'

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
const turns = async (n = 20): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r))
}

t.test('registry: has/take per domain and key, expiry, bound', async (t) => {
  let now = 1000
  const reg = new SourceRegistry({ ttlMs: 100, maxEntries: 2, now: () => now })
  const src = { kind: 'inline' as const, xml: '<IVR/>' }
  reg.register('Example.TEST', 'k1', src)
  t.ok(reg.has('example.test', 'k1'), 'domain names are case-insensitive')
  t.notOk(reg.has('other.test', 'k1'), 'scoped by domain')
  t.notOk(reg.has('example.test', 'K1'), 'keys are exact')
  now += 100
  t.notOk(reg.has('example.test', 'k1'), 'expired')
  t.equal(reg.size, 0, 'and dropped')
  reg.register('example.test', 'a', src)
  reg.register('example.test', 'b', src)
  reg.register('example.test', 'c', src)
  t.equal(reg.size, 2)
  t.notOk(reg.has('example.test', 'a'), 'the oldest went first')
  t.same(reg.take('example.test', 'b'), src)
  t.equal(reg.take('example.test', 'b'), undefined, 'taken once')
  reg.register('example.test', 'short', src, 10)
  now += 10
  t.equal(reg.take('example.test', 'short'), undefined, 'a per-entry TTL')
})

t.test('runner.register / has (the xml_curl IvrHandoff)', async (t) => {
  const r = rig(t)
  r.runner.register(DOMAIN, 'req-1', { kind: 'url', urls: [MENU_URL] })
  t.ok(r.runner.has(DOMAIN, 'req-1'))
  t.notOk(r.runner.has('other.test', 'req-1'))
  t.notOk(r.runner.has(DOMAIN, 'req-2'))
})

t.test('a registered URL source: fetched with the call parameters', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set('https://app.example.test/b', wrap('<Speak>hello</Speak>'))
  r.runner.register(DOMAIN, 'req-1', { kind: 'url', urls: ['https://app.example.test/a', 'https://app.example.test/b'] })
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), { ...phoneVars(), cod_ivr_request: 'req-1' })
  await r.settle()
  t.same(r.pbx.apps(), ['speak flite|kal|hello'])
  t.same(r.fetcher.requests[0]?.urls, ['https://app.example.test/a', 'https://app.example.test/b'])
  t.equal(r.fetcher.requests[0]?.params.CallStatus, 'in-progress')
  t.notOk(r.runner.has(DOMAIN, 'req-1'), 'the source was taken')
})

t.test('an extension: the directory URL is fetched', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set(MENU_URL, wrap('<Speak>menu</Speak>'))
  r.parkExtension()
  await r.settle()
  t.same(r.pbx.apps(), ['speak flite|kal|menu'])
  t.same(r.fetcher.requests[0]?.urls, [MENU_URL])
})

t.test('parked channels that are not the runner’s are ignored', async (t) => {
  const r = rig(t)
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), phoneVars())
  r.pbx.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': r.uuid })
  await turns()
  t.equal(r.runner.activeSessions(), 0)
  t.same(r.pbx.commands, [])
})

t.test('channels that name something unusable are hung up, nothing is fetched', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['URL of no extension', { ...phoneVars(), cod_ivr_url: encodeURIComponent('https://evil.example.test/x') }],
    ['extension and URL disagree', { ...phoneVars(), cod_ivr_url: encodeURIComponent('https://evil.example.test/x'), cod_ivr_extension: '3001' }],
    ['bad percent-encoding', { ...phoneVars(), cod_ivr_url: '%E0%A4%A' }],
    ['unknown domain', { ...phoneVars(), cod_domain: 'other.test', cod_ivr_request: 'k' }],
    ['malformed key', { ...phoneVars(), cod_ivr_request: 'k y' }],
  ]
  for (const [what, vars] of cases) {
    const r = rig(t)
    r.pbx.park(r.uuid, phoneHeaders(r.uuid), vars)
    await r.settle()
    await turns()
    t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'], what)
    t.same(r.fetcher.requests, [], `${what}: no fetch`)
    t.same(r.pbx.apps(), [])
  }
})

t.test('a key with no registered source (expired, or taken): the call ends', async (t) => {
  const r = rig(t)
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), { ...phoneVars(), cod_ivr_request: 'never-registered' })
  await r.settle()
  t.same(kills(r), ['NORMAL_TEMPORARY_FAILURE'])
})

t.test('one session per channel: a second CHANNEL_PARK of the channel is ignored, also after the end', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'speak' ? { kind: 'hold' } : undefined) })
  const key = randomUUID()
  r.runner.register(DOMAIN, key, { kind: 'inline', xml: wrap('<Speak>one</Speak>') })
  const vars = { ...phoneVars(), cod_ivr_request: key }
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), vars)
  await turns()
  r.runner.register(DOMAIN, key, { kind: 'inline', xml: wrap('<Speak>two</Speak>') })
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), vars)
  await turns()
  t.equal(r.runner.activeSessions(), 1)
  t.same(r.pbx.apps(), ['speak flite|kal|one'])
  r.pbx.hangup(r.uuid)
  await r.settle()
  r.pbx.park(r.uuid, phoneHeaders(r.uuid), vars)
  await turns()
  t.equal(r.runner.activeSessions(), 0, 'the ended channel is not run again before CHANNEL_DESTROY')
})

t.test('the caller hangs up mid-document: the session stops cleanly, nothing leaks', async (t) => {
  const listenersBefore = 2 // one event listener and one reconnect listener, for all sessions
  const timersBefore = timers()
  const r = rig(t, { script: (rec) => (rec.app === 'play_and_get_digits' ? { kind: 'hangup' } : undefined) })
  t.equal(r.pbx.listenerCount(), listenersBefore, 'the runner listens once, for every session')
  r.parkInline(wrap('<Speak>hi</Speak><GetDigits action="https://app.example.test/x"><Play>menu.wav</Play></GetDigits><Speak>never</Speak><Park/>'))
  await r.settle()
  t.same(r.pbx.apps(), ['speak flite|kal|hi', 'play_and_get_digits 1 99 1 5000 # /prompts/menu.wav silence_stream://1 cod_ivr_digits . 5000'])
  t.same(kills(r), [], 'a gone call is not hung up again')
  t.same(r.fetcher.requests, [], 'and nothing is fetched for it')
  t.equal(r.runner.activeSessions(), 0)
  t.equal(r.pbx.listenerCount(), listenersBefore, 'no listener left behind')
  t.equal(timers(), timersBefore, 'no timer left behind')
})

t.test('after an ESL reconnect, sessions whose channel went away meanwhile are stopped', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'speak' ? { kind: 'hold' } : undefined) })
  const alive = randomUUID()
  r.parkInline(wrap('<Speak>a</Speak>'))
  r.parkInline(wrap('<Speak>b</Speak>'), { uuid: alive })
  await turns()
  t.equal(r.runner.activeSessions(), 2)
  r.pbx.vanish(r.uuid) // hung up while the link was down: no CHANNEL_HANGUP seen
  r.pbx.reconnect()
  await turns(50)
  t.equal(r.runner.activeSessions(), 1, 'the gone channel was found out')
  t.ok(r.pbx.commands.includes(`uuid_getvar ${alive} uuid`))
  t.same(kills(r), [])
  r.pbx.hangup(alive)
  await r.settle()
})

t.test('the caller hangs up while the document is being fetched', async (t) => {
  let release: (() => void) | undefined
  class SlowFetcher extends FakeFetcher {
    override async fetchDocument(urls: readonly string[], params: Readonly<Record<string, string>>, method?: HttpMethod): Promise<Result<FetchedDocument, FetchError>> {
      await new Promise<void>((res) => (release = res))
      return super.fetchDocument(urls, params, method)
    }
  }
  const fetcher = new SlowFetcher()
  fetcher.docs.set(MENU_URL, wrap('<Speak>too late</Speak>'))
  const r = rig(t, { deps: { fetcher } })
  r.parkExtension()
  await turns()
  t.equal(r.runner.activeSessions(), 1)
  r.pbx.hangup(r.uuid)
  await r.settle()
  release?.()
  await turns()
  t.same(r.pbx.apps(), [], 'the late document is not run')
  t.same(kills(r), [])
})

t.test('CHANNEL_ANSWER while the IVR runs: no second answer', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'sleep' ? { kind: 'complete' } : undefined) })
  r.fetcher.docs.set(MENU_URL, wrap('<Set var="a" val="1"/><GetJSON var="j" url="https://app.example.test/j"/><Play>a.wav</Play>'))
  r.parkExtension({ answered: false })
  r.pbx.channel(r.uuid).answered = true
  r.pbx.emit({ 'Event-Name': 'CHANNEL_ANSWER', 'Unique-ID': r.uuid, 'Caller-Channel-Answered-Time': '1795327686400000' })
  await r.settle()
  t.same(r.pbx.apps(), ['set playback_terminators=none', 'playback /prompts/a.wav'])
  t.equal(r.fetcher.requests.find((q) => q.kind === 'json')?.params.AnswerTime, '1795327686400000')
})

t.test('an unanswered call: CallStatus ringing until the IVR answers it', async (t) => {
  const r = rig(t)
  r.fetcher.docs.set('https://app.example.test/n', wrap('<Speak>x</Speak>'))
  r.parkInline(wrap('<GetJSON var="j" url="https://app.example.test/j"/><Answer/><Redirect>https://app.example.test/n</Redirect>'), { answered: false })
  await r.settle()
  const [json, doc] = r.fetcher.requests
  t.equal(json?.params.CallStatus, 'ringing')
  t.equal(doc?.params.CallStatus, 'in-progress')
  t.equal(doc?.params.AnswerTime, '1795327686302035')
})

t.test('a leg the daemon originated: its call parameters and the route context of its request', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'bridge' ? { kind: 'bridged' } : undefined) })
  r.fetcher.docs.set('https://app.example.test/n', wrap('<Transfer>bob</Transfer>'))
  const key = randomUUID()
  r.runner.register(DOMAIN, key, { kind: 'inline', xml: wrap('<Redirect>https://app.example.test/n</Redirect>') })
  r.pbx.park(
    r.uuid,
    {
      'Unique-ID': r.uuid,
      'Call-Direction': 'outbound',
      'Caller-Destination-Number': 'cod_route',
      'Caller-Caller-ID-Number': '0311112222',
      'Caller-Callee-ID-Number': '0501230000',
    },
    {
      cod_domain: DOMAIN,
      cod_request_id: key,
      cod_operation: 'call_external',
      cod_role: 'originator',
      cod_ivr_request: key,
      sip_to_user: '0311112222',
      origination_caller_id_number: '0501230000',
    },
  )
  await r.settle()
  const p = r.fetcher.requests[0]?.params ?? {}
  t.equal(p.Direction, 'outbound')
  t.equal(p.CalledNumber, '0311112222', 'the number the leg dialled')
  t.equal(p.CallingNumber, '0501230000', 'the number we presented')
  t.equal(p.UserId, undefined)
  const apps = r.pbx.apps()
  t.ok(apps.includes(`export cod_request_id=${key}`), 'the transfer carries the request id, as the dialplan does')
  t.ok(apps.includes('export cod_operation=call_external'))
})

t.test('close(): sessions stop and their calls are hung up; a connected call is left alone', async (t) => {
  const r = rig(t, { script: (rec) => (rec.app === 'speak' || rec.app === 'bridge' ? { kind: 'hold' } : undefined) })
  const other = randomUUID()
  r.parkInline(wrap('<Speak>long prompt</Speak>'))
  r.parkInline(wrap('<Transfer>bob</Transfer>'), { uuid: other })
  await turns(50)
  r.pbx.emit({ 'Event-Name': 'CHANNEL_BRIDGE', 'Unique-ID': other, 'Bridge-A-Unique-ID': other, 'Bridge-B-Unique-ID': randomUUID() })
  t.equal(r.runner.activeSessions(), 2)
  await r.runner.close()
  t.equal(r.runner.activeSessions(), 0)
  t.equal(r.pbx.listenerCount(), 0, 'the runner stopped listening')
  t.same(kills(r), ['NORMAL_CLEARING'], 'the parked IVR call is hung up')
  t.notOk(r.pbx.commands.some((c) => c.startsWith(`uuid_kill ${other}`)), 'the connected call is not')
  await r.runner.close()
})
