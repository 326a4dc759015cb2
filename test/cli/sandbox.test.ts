/**
 * The sandbox as an application developer runs it, every part a process of its own: `cod
 * simulator` and `cod start` on one file (the daemon in `freeswitch` mode, unchanged), then
 * `cod call` through the daemon's API, printing the reply and the request's channel events
 * until they end. Also: refused calls, a wrong token, an unreachable daemon, the usage
 * mistakes of `cod call`, and `cod start` / `cod simulator` on a refused configuration and
 * their exit 0 after SIGTERM. One daemon and one simulator for the whole file.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { spawnTsx } from '../faults/harness/procs.js'
import { cod, codHere, COD_ENTRY, tempDir } from './run-cod.js'

// Two long-lived children and several calls on a loaded 2-core machine: generous, still bounded.
t.setTimeout(180_000)

const TOKEN = 'sandbox-token-cli-test'

/** A port free now (the listeners below take it a moment later; a clash fails the start loudly). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))))
    })
  })

const DOMAIN = `name: cli.test
api_tokens: [ "${TOKEN}" ]
channel_limit: 10
gateway: pstn
calling_numbers: [ "0501230000" ]
users:
  - { id: "1", name: alice, extension: "1001", password: alice-sip-secret,
      sim: { terminals: [ { answer_after: 1 } ] } }
  - { id: "2", name: bob, extension: "1002", password: bob-sip-secret,
      sim: { terminals: [ { answer_after: 1, hangup_after: 4 } ] } }
  - { id: "3", name: dave, extension: "1003", password: dave-sip-secret,
      sim: { terminals: [ { behaviour: unregistered } ] } }
`

t.test('sandbox: cod simulator + cod start (freeswitch mode) + cod call', async (t) => {
  const dir = tempDir(t, 'sandbox')
  const [http, xmlCurl, esl] = [await freePort(), await freePort(), await freePort()]
  mkdirSync(join(dir, 'domains'))
  writeFileSync(join(dir, 'domains/cli.test.yaml'), DOMAIN)
  const config = join(dir, 'daemon.yaml')
  writeFileSync(
    config,
    `http: { host: 127.0.0.1, port: ${http} }
freeswitch: { mode: freeswitch, host: 127.0.0.1, port: ${esl}, password: ClueCon }
xml_curl: { host: 127.0.0.1, port: ${xmlCurl}, username: freeswitch, password: change-me-xml-curl }
journal: { dir: journal }
log: { level: info }
callbacks: { allow: [127.0.0.1/32] }
`,
  )
  // Simulated time 20x faster: alice answers after 50 ms, then bob (bridged by the dialplan) answers
  // after 50 ms and hangs up 200 ms later, which ends the call: it always has both legs, however slow the machine.
  const sim = spawnTsx(t, 'cod simulator', COD_ENTRY, ['simulator', '--config', config, '--time-scale', '0.05'])
  const listening = await sim.waitLog('simulator listening', 1, 30_000)
  t.equal(listening.port, esl, 'the simulator listens on freeswitch.port')
  t.equal(listening.xml_curl, `http://127.0.0.1:${xmlCurl}/freeswitch/xml_curl`, 'and fetches from the daemon\'s xml_curl listener, from the same file')
  const daemon = spawnTsx(t, 'cod start', COD_ENTRY, ['start', '--config', config])
  await daemon.waitLog('daemon listening', 1, 30_000)
  await daemon.waitLog('FreeSWITCH link up', 1, 30_000)
  const url = `http://127.0.0.1:${http}`
  const env = { COD_TOKEN: TOKEN }

  await t.test('a call: the reply, then every channel of the request from added to removed (exit 0)', async (t) => {
    const r = await cod(['call', 'call_user', '--url', url, '--domain', 'cli.test', 'user_name=alice', 'destination=bob'], { env, timeoutMs: 60_000 })
    t.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trim().split('\n')
    const reply = /HTTP 200 (\{.*\})$/.exec(lines[0] ?? '')
    t.ok(reply, `the reply first: ${lines[0]}`)
    const uuids = (JSON.parse(reply?.[1] ?? '{}') as { uuids?: string[] }).uuids ?? []
    t.ok(uuids.length >= 1)
    const events = lines.slice(1).map((l) => /^\s*\+\d+\.\d\ds {2}(added|updated|removed)\s+(\S+)/.exec(l))
    t.ok(events.every((e) => e !== null), 'then one line per event')
    const of = (uuid: string) => events.filter((e) => e?.[2] === uuid).map((e) => e?.[1])
    t.equal(of(uuids[0] ?? '')[0], 'added', 'alice\'s leg added')
    t.equal(of(uuids[0] ?? '').at(-1), 'removed', 'and removed')
    const others = [...new Set(events.map((e) => e?.[2]))].filter((u) => u !== uuids[0])
    t.equal(others.length, 1, 'bob\'s leg, bridged by the dialplan, is followed too')
    t.equal(of(others[0] ?? '').at(-1), 'removed')
    t.match(r.stdout, /answered/, 'the states are shown')
    t.match(r.stdout, /removed .*NORMAL_CLEARING/, 'with the hangup cause')
  })

  await t.test('--status-events: the request\'s status events too, numbered, each leg to its completed (exit 0)', async (t) => {
    const r = await cod(['call', 'call_user', '--url', url, '--domain', 'cli.test', '--status-events', 'user_name=alice', 'destination=bob'], { env, timeoutMs: 60_000 })
    t.equal(r.code, 0, r.stderr)
    const status = r.stdout
      .split('\n')
      .map((l) => /^\s*\+\d+\.\d\ds {2}status\s+#(\d+)\s+(\w+)\s+(origin|destination)\s+(\S+)(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
    t.same(status.map((m) => Number(m[1])), status.map((_, i) => i + 1), 'numbered 1..n, printed in order')
    const of = (leg: string) => status.filter((m) => m[3] === leg).map((m) => m[2])
    t.same(of('origin'), ['initiated', 'ringing', 'answered', 'bridged', 'completed'], "alice's leg")
    t.same(of('destination'), ['initiated', 'ringing', 'answered', 'completed'], "bob's leg")
    t.match(status.find((m) => m[3] === 'destination' && m[2] === 'completed')?.[5], /NORMAL_CLEARING by destination, billsec \d+/, 'bob hung up')
    const mistake = await codHere(['call', 'call_user', '--url', url, '--domain', 'cli.test', '--status-events', 'user_name=alice', 'destination=bob', 'status_callback_url=http://x.example/'], { env })
    t.equal(mistake.code, 2, 'a status_callback_url of its own as well: a usage mistake')
    t.match(mistake.stderr, /--status-events sets status_callback_url itself/)
  })

  await t.test('--raw prints the CTI frames as received', async (t) => {
    const r = await codHere(['call', 'call_user', '--url', url, '--domain', 'cli.test', '--raw', '--json', '{"user_name":"alice","destination":"1002"}'], { env })
    t.equal(r.code, 0, r.stderr)
    const frames = r.stdout.trim().split('\n').slice(1).map((l) => JSON.parse(l) as { type: string; event: string })
    t.ok(frames.length >= 4)
    t.ok(frames.every((f) => f.type === 'info_event'))
    t.equal(frames.at(-1)?.event, 'removed')
  })

  await t.test('refused: the reply says why (exit 1), no events awaited', async (t) => {
    const [unregistered, unknown] = await Promise.all([
      codHere(['call', 'call_user', '--url', url, '--domain', 'cli.test', 'user_name=dave', 'destination=bob'], { env }),
      codHere(['call', 'call_user', '--url', url, '--domain', 'cli.test', '--no-events', 'user_name=zoe', 'destination=bob'], { env }),
    ])
    t.equal(unregistered.code, 1)
    t.match(unregistered.stdout, /HTTP 409 .*user_not_registered/)
    t.equal(unknown.code, 1)
    t.match(unknown.stdout, /HTTP 404 .*user_not_found/)
  })

  await t.test('a wrong token: the CTI connection is refused and no request is sent (exit 1)', async (t) => {
    const r = await codHere(['call', 'call_user', '--url', url, '--domain', 'cli.test', '--token', 'not-the-right-token-at-all', 'user_name=alice', 'destination=bob'])
    t.equal(r.code, 1)
    t.match(r.stderr, /CTI connection refused: HTTP 401 .*unauthorized/)
    t.match(r.stderr, /no request was sent/)
    t.equal(r.stdout, '')
  })

  await t.test('an unreachable daemon (exit 1)', async (t) => {
    const closed = await freePort()
    const r = await codHere(['call', 'call_user', '--url', `http://127.0.0.1:${closed}`, '--domain', 'cli.test', 'user_name=alice', 'destination=bob'], { env })
    t.equal(r.code, 1)
    t.match(r.stderr, /CTI connection failed: .*ECONNREFUSED/)
  })

  await t.test('SIGTERM: the daemon and the simulator stop gracefully (exit 0)', async (t) => {
    t.equal(await daemon.stop(30_000), 0, 'cod start exits 0')
    t.ok(daemon.count('stopped') === 1, 'after its graceful stop')
    t.equal(await sim.stop(30_000), 0, 'cod simulator exits 0')
  })
})

t.test('cod call: usage mistakes (exit 2), before anything is sent', async (t) => {
  const cases = [
    ['call'],
    ['call', 'call_everyone', '--domain', 'd', '--token', 'x'],
    ['call', 'call_user', 'user_name=alice'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', 'no-equals-sign'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', 'limit:=not json'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', '--json', '[1]'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', '--json', '{}', 'a=b'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', '--timeout', '0'],
    ['call', 'call_user', '--domain', 'd', '--token', 'x', '--url', 'ftp://host'],
  ]
  const runs = await Promise.all(cases.map((args) => codHere(args, { env: { COD_TOKEN: '' } })))
  runs.forEach((r, i) => t.equal(r.code, 2, (cases[i] ?? []).join(' ')))
})

t.test('cod start on a port taken: why on stderr, exit 1', async (t) => {
  const dir = tempDir(t, 'taken')
  mkdirSync(join(dir, 'domains'))
  writeFileSync(join(dir, 'domains/cli.test.yaml'), DOMAIN)
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())))
  const address = holder.address()
  const taken = typeof address === 'object' && address !== null ? address.port : 0
  const config = join(dir, 'daemon.yaml')
  writeFileSync(
    config,
    `http: { host: 127.0.0.1, port: ${taken} }\nfreeswitch: { mode: freeswitch, port: ${await freePort()} }\nxml_curl: { port: 0, username: freeswitch, password: change-me-xml-curl }\n`,
  )
  const r = await cod(['start', '--config', config])
  t.equal(r.code, 1)
  t.match(r.stderr, new RegExp(`daemon not started:[\\s\\S]*cannot listen on 127\\.0\\.0\\.1:${taken}`))
})

t.test('cod start and cod simulator on a refused configuration: the problems on stderr, exit 1', async (t) => {
  const dir = tempDir(t, 'refused')
  const config = join(dir, 'daemon.yaml')
  writeFileSync(config, 'http: { port: 99999 }\n')
  const [start, sim] = await Promise.all([cod(['start', '--config', config]), codHere(['simulator', '--config', config])])
  t.equal(start.code, 1)
  t.match(start.stderr, /daemon not started:[\s\S]*daemon\.yaml: http\.port: /)
  t.equal(sim.code, 1)
  t.match(sim.stderr, /simulator not started:[\s\S]*daemon\.yaml/)
})
