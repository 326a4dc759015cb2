/**
 * D1 (issue 13): from FreeSWITCH's shutdown notice on, the daemon sends nothing and answers
 * `503 pbx_unavailable` (and /healthz 503) until it has reconnected. The simulator shuts down as
 * FreeSWITCH 1.10.12 does (test/fixtures/freeswitch/esl/26-fsctl-shutdown.txt): the SHUTDOWN
 * event, the channels hung up SYSTEM_SHUTDOWN, then "The system is being shut down." and FIN.
 */
import net from 'node:net'
import t from 'tap'
import { Simulator } from '../../src/sim/index.js'
import { TIME_SCALE, sleep, startStack, waitFor } from './harness/in-process.js'
import { lagMeter } from '../support/link-lag.js'

t.test('the simulator shuts down as FreeSWITCH does: SHUTDOWN event, hangups, shutdown notice, FIN', async (t) => {
  const sim = new Simulator({ domains: [], password: 'ClueCon' })
  const port = await sim.listen(0)
  const sock = net.connect(port, '127.0.0.1')
  t.teardown(() => sock.destroy())
  let received = ''
  let ended = false
  sock.on('data', (d: Buffer) => (received += d.toString('utf8')))
  sock.on('end', () => (ended = true))
  await waitFor('auth/request', () => received.includes('auth/request'))
  sock.write('auth ClueCon\n\nevent json SHUTDOWN\n\n')
  await waitFor('subscribed', () => received.includes('+OK event listener enabled json'))
  await sim.close()
  await waitFor('FIN', () => ended)
  const shutdownAt = received.indexOf('"Event-Name":"SHUTDOWN"')
  const noticeAt = received.indexOf('Content-Type: text/disconnect-notice\nContent-Length: 31\n\nThe system is being shut down.\n')
  t.ok(shutdownAt > 0, 'the SHUTDOWN event')
  t.match(received, /"Event-Calling-Function":"switch_core_destroy"/)
  t.match(received, /"Event-Info":"System Shutting Down"/)
  t.ok(noticeAt > shutdownAt, 'then the 31-byte shutdown notice, then FIN')
})

t.test('from the shutdown notice on: /healthz 503 and 503 pbx_unavailable, nothing sent; back after the reconnection', async (t) => {
  const s = await startStack(t)
  const sim = s.daemon.simulator
  if (sim === undefined) return t.fail('no built-in simulator')
  const port = Number(s.logs.lines.find((l) => l.msg === 'built-in FreeSWITCH simulator listening')?.port)
  t.equal(await s.healthz(), 200)
  // A call ringing while the switch shuts down: accepted before the notice, its legs end SYSTEM_SHUTDOWN.
  const before = await s.call('call_user', { user_name: 'ring', destination: '0311112222' })
  t.equal(before.status, 200)
  const commandsBefore = sim.commands.length
  const closing = sim.close()
  const at = Date.now()
  const lag = lagMeter()
  await waitFor('healthz 503', async () => (await s.healthz()) === 503, 5000, 5)
  const ms = Date.now() - at
  const blockedMs = lag.stop()
  t.ok(ms - blockedMs < 1000, `healthz 503 after ${ms} ms (of which ${blockedMs} ms this process could not run)`)
  const r = await s.call('call_user', { user_name: 'quick', destination: '0311112222' })
  t.same([r.status, r.json.error?.id], [503, 'pbx_unavailable'])
  await closing
  const sent = sim.commands.slice(commandsBefore).map((c) => c.text)
  t.notOk(sent.some((c) => c.includes('originate')), `no originate reached the shutting-down switch (${sent.join(' | ')})`)
  await sleep(100)
  t.equal(await s.healthz(), 503, 'still 503 while FreeSWITCH is away')

  // FreeSWITCH is back (a new one on the same port): 200 again.
  const cfg = s.daemon.store.current().config
  const fresh = new Simulator({
    domains: cfg.domains,
    password: cfg.daemon.freeswitch.password,
    xmlCurl: { url: s.daemon.xmlCurlUrl, username: cfg.daemon.xml_curl.username, password: cfg.daemon.xml_curl.password },
    timeScale: TIME_SCALE,
  })
  t.teardown(() => fresh.close())
  await fresh.listen(port)
  await waitFor('/healthz 200', async () => (await s.healthz()) === 200, 5000, 20)
  const after = await s.call('call_user', { user_name: 'quick', destination: '0311112222' })
  t.equal(after.status, 200, 'placed again once reconnected')
})

t.test('`fsctl shutdown` on any event socket: +OK, then the same shutdown', async (t) => {
  const sim = new Simulator({ domains: [], password: 'ClueCon' })
  const port = await sim.listen(0)
  t.teardown(() => sim.close())
  const sock = net.connect(port, '127.0.0.1')
  t.teardown(() => sock.destroy())
  let received = ''
  let ended = false
  sock.on('data', (d: Buffer) => (received += d.toString('utf8')))
  sock.on('end', () => (ended = true))
  await waitFor('auth/request', () => received.includes('auth/request'))
  sock.write('auth ClueCon\n\nevent json SHUTDOWN\n\napi fsctl shutdown\n\n')
  await waitFor('FIN', () => ended)
  t.match(received, /Content-Type: api\/response\nContent-Length: 4\n\n\+OK\n/, 'answered +OK')
  t.ok(received.indexOf('"Event-Name":"SHUTDOWN"') > received.indexOf('+OK\n'), 'then the SHUTDOWN event')
  t.match(received, /The system is being shut down\.\n$/, 'the notice last')
})
