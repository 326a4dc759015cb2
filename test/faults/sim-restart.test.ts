/**
 * Fault: FreeSWITCH restarts with calls live. The simulator is torn down abruptly (its sockets
 * destroyed first, so the hangups of its calls are lost like in a crash), a new one starts on the
 * same port with calls the daemon never heard of. The daemon must say so on /healthz (503, then
 * 200), reconnect, report the result of the request that was ringing, and count the channels
 * right after its resynchronisation: the old calls are gone, the new ones count toward
 * channel_limit.
 */
import t from 'tap'
import { Simulator } from '../../src/sim/index.js'
import { TIME_SCALE, receiver, sleep, startStack, waitFor } from './harness/in-process.js'

t.test('simulator restarted with calls live', async (t) => {
  t.setTimeout(25000)
  // Each call counts its leg and its destination's (docs/engine.md "Channel limit"): 2 per call here.
  const s = await startStack(t, { domains: { 'fault.test': (d) => (d.channel_limit = 4) } })
  const cb = await receiver(t)
  const old = s.daemon.simulator
  if (old === undefined) throw new Error('simulator mode expected')
  const portLine = s.logs.lines.find((l) => l.msg === 'built-in FreeSWITCH simulator listening')
  const port = Number(portLine?.port)
  t.ok(port > 0, 'simulator port known')

  // A connected call (ann's leg bridged to bob's: 2 channels) and a ringing one (1 channel, and
  // bob's leg held for after the answer).
  const talking = await s.call('call_user', { user_name: 'ann', destination: 'bob', callback_url: cb.url })
  t.equal(talking.status, 200)
  await waitFor('the answered callback', () => cb.deliveries.length === 1)
  await waitFor('the bridge', () => old.liveChannels().some((c) => c.bridgedTo !== undefined))
  const ringing = await s.call('call_user', { user_name: 'ring', destination: 'bob', callback_url: cb.url })
  t.equal(ringing.status, 200, 'the ringing call and its destination fit')
  const full = await s.call('call_user', { user_name: 'quick', destination: 'bob' })
  t.same([full.status, full.json.error?.id], [429, 'channel_limit_reached'], '4 of 4 channels in use or held')

  // The crash: sockets first (no events reach the daemon), then the switch and its calls.
  old.dropConnections()
  await old.close()
  await waitFor('/healthz 503', async () => (await s.healthz()) === 503, 6000, 50)
  const down = await s.call('call_user', { user_name: 'quick', destination: 'bob' })
  t.same([down.status, down.json.error?.id], [503, 'pbx_unavailable'], 'requests refused while FreeSWITCH is away')

  // The new FreeSWITCH has a call of its own already (a phone calling bob: 2 channels).
  const cfg = s.daemon.store.current().config
  const fresh = new Simulator({
    domains: cfg.domains,
    password: cfg.daemon.freeswitch.password,
    sipProfile: cfg.daemon.freeswitch.sip_profile,
    xmlCurl: { url: s.daemon.xmlCurlUrl, username: cfg.daemon.xml_curl.username, password: cfg.daemon.xml_curl.password },
    timeScale: TIME_SCALE,
  })
  t.teardown(() => fresh.close())
  await fresh.placeInboundCall({ domain: 'fault.test', fromUser: 'duo', destination: 'bob' })
  await waitFor('the inbound call bridged', () => fresh.liveChannels().some((c) => c.bridgedTo !== undefined))
  t.equal(fresh.liveChannels().length, 2)
  await fresh.listen(port)

  await waitFor('/healthz 200', async () => (await s.healthz()) === 200, 8000, 50)
  t.not(old.coreUuid, fresh.coreUuid, 'another FreeSWITCH')

  // The ringing request died with the old switch: its one result arrives.
  await waitFor('the ringing request result', () => cb.deliveries.some((d) => d.headers['x-request-id'] === ringing.requestId), 8000)
  const lost = JSON.parse(cb.deliveries.find((d) => d.headers['x-request-id'] === ringing.requestId)?.body ?? '{}') as {
    result_code?: number
  }
  t.equal(lost.result_code, 500, 'not answered')

  // Counts after the resynchronisation: 2 live (the new call), the old 3 gone and their holds
  // with them. A 2-leg request (duo has 2 terminals, + bob: 5 > 4) is refused; a 1-leg request
  // fits (+ bob: 4 of 4).
  await waitFor('resynchronised', () => s.logs.count('channels resynchronised') >= 2, 5000)
  const two = await s.call('call_user', { user_name: 'duo', destination: 'bob' })
  t.same([two.status, two.json.error?.id], [429, 'channel_limit_reached'], 'the new switch’s calls count')
  const one = await s.call('call_user', { user_name: 'busy', destination: 'bob' })
  t.equal(one.status, 200, `the old calls no longer count: ${JSON.stringify(one.json)}`)
  t.ok(
    fresh.commands.some((c) => c.text.startsWith('bgapi originate ')),
    'the originate went to the new switch',
  )
  await sleep(300)
  const perRequest = new Map<string, number>()
  for (const d of cb.deliveries) perRequest.set(String(d.headers['x-request-id']), (perRequest.get(String(d.headers['x-request-id'])) ?? 0) + 1)
  t.same([...perRequest.values()], [1, 1], 'one callback per request, no more')
})
