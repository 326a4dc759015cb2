/**
 * The standalone simulator (src/sim/main.ts, src/sim/run.ts) that the fault suite freezes and
 * kills: its command line (every rule, with the bad case), the xml_curl URL it derives from the
 * daemon's file, and the process itself: starts on freeswitch.host:port, answers ESL, re-reads
 * the domains on SIGHUP, stops with exit 0 on SIGTERM or `fsctl shutdown`, exits 2 on a bad
 * configuration.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseSimulatorArgs, xmlCurlUrlOf } from '../../src/sim/run.js'
import type { LoadedConfig } from '../../src/config/load.js'
import { daemonSchema } from '../../src/config/schema.js'
import { spawnTsx } from './harness/procs.js'
import { editYaml, faultStack, waitFor } from './harness/stack.js'

t.test('command line', async (t) => {
  t.same(parseSimulatorArgs([]), { ok: true, value: { configFile: 'conf/daemon.yaml', timeScale: 1 } }, 'defaults')
  t.same(parseSimulatorArgs(['--help']), { ok: true, value: 'help' })
  t.same(parseSimulatorArgs(['-c', 'x.yaml', '--time-scale', '0.05', '--port', '0', '--xml-curl-url', 'http://10.0.0.1:8080/freeswitch/xml_curl']), {
    ok: true,
    value: { configFile: 'x.yaml', timeScale: 0.05, port: 0, xmlCurlUrl: 'http://10.0.0.1:8080/freeswitch/xml_curl' },
  })
  for (const [args, why] of [
    [['--bogus'], /Unknown option/],
    [['extra'], /positional/],
    [['--time-scale', '0'], /--time-scale/],
    [['--time-scale', '-1'], /--time-scale/],
    [['--time-scale', 'fast'], /--time-scale/],
    [['--port', '65536'], /--port/],
    [['--port', '80a'], /--port/],
    [['--xml-curl-url', 'ftp://host/x'], /--xml-curl-url/],
    [['--xml-curl-url', 'not a url'], /--xml-curl-url/],
  ] as const) {
    const r = parseSimulatorArgs(args)
    t.match(r, { ok: false, error: why }, `refused: ${args.join(' ')}`)
  }
})

t.test('the xml_curl URL derived from the daemon file', async (t) => {
  const config = (daemon: Record<string, unknown>): LoadedConfig => ({
    file: 'daemon.yaml',
    daemon: daemonSchema.parse({ freeswitch: { mode: 'freeswitch' }, xml_curl: { username: 'fs', password: 'password1' }, ...daemon }),
    domains: [],
  })
  const xc = (more: Record<string, unknown>) => ({ xml_curl: { username: 'fs', password: 'password1', ...more } })
  t.equal(xmlCurlUrlOf(config({})), 'http://127.0.0.1:8081/freeswitch/xml_curl', 'the defaults: the xml_curl listener, not the API one')
  t.equal(xmlCurlUrlOf(config({ http: { port: 9000 }, ...xc({ port: 9001 }) })), 'http://127.0.0.1:9001/freeswitch/xml_curl', 'xml_curl.port, whatever http.port is')
  t.equal(xmlCurlUrlOf(config(xc({ host: '0.0.0.0', port: 9000 }))), 'http://127.0.0.1:9000/freeswitch/xml_curl', 'a wildcard listener is reached on loopback')
  t.equal(xmlCurlUrlOf(config(xc({ host: '::', port: 9000 }))), 'http://[::1]:9000/freeswitch/xml_curl', 'IPv6 wildcard')
  t.equal(xmlCurlUrlOf(config(xc({ host: '10.1.2.3', port: 9000 }))), 'http://10.1.2.3:9000/freeswitch/xml_curl', 'a specific address as it is')
  t.equal(xmlCurlUrlOf(config(xc({ port: 0 }))), undefined, 'port 0: only the daemon knows it (--xml-curl-url is required)')
  t.equal(
    xmlCurlUrlOf(config({ xml_curl: { username: 'fs', password: 'password1', path: '/fs', base_url: 'http://pbx-gw.example:8080/' } })),
    'http://pbx-gw.example:8080/fs/xml_curl',
    'xml_curl.base_url wins, with xml_curl.path',
  )
})

t.test('the process: listens where the daemon file says, SIGHUP re-reads, SIGTERM exits 0', async (t) => {
  const stack = await faultStack(t)
  const sim = await stack.startSim()
  const listening = await sim.waitLog('simulator listening')
  t.equal(listening.port, stack.eslPort, 'on freeswitch.port')
  t.equal(listening.xml_curl, `http://127.0.0.1:${stack.xmlCurlPort}/freeswitch/xml_curl`, "fetches the daemon's xml_curl listener")
  t.ok(stack.observer.connected, 'an ESL client authenticates and subscribes')

  sim.signal('SIGHUP')
  await sim.waitLog('configuration reloaded')
  editYaml(join(stack.dir, 'domains', 'faults.test.yaml'), (doc) => {
    doc.channel_limit = 'many'
  })
  sim.signal('SIGHUP')
  const refused = await sim.waitLog('configuration reload refused; the running domains stay')
  t.match(JSON.stringify(refused.problems), /channel_limit/, 'a bad file is refused with the reason')
  t.ok(sim.isRunning(), 'and the simulator keeps running')

  sim.signal('SIGTERM')
  t.equal(await sim.exited, 0, 'SIGTERM: exit 0')
  await waitFor('the observer sees the socket close', () => !stack.observer.connected, 5000)
})

t.test('the process ends, exit 0, when the switch is shut down over ESL (fsctl shutdown), as FreeSWITCH does', async (t) => {
  const stack = await faultStack(t)
  const sim = await stack.startSim()
  stack.observer.sendApi('fsctl shutdown')
  t.equal(await sim.exited, 0, 'exit 0')
  t.equal(sim.count('simulator stopped'), 1, 'logged once')
})

t.test('the process refuses a bad configuration with exit 2', async (t) => {
  const stack = await faultStack(t)
  writeFileSync(stack.configFile, 'freeswitch: { mode: freeswitch }\n')
  const sim = spawnTsx(t, 'simulator (bad file)', 'src/sim/main.ts', ['--config', stack.configFile])
  t.equal(await sim.exited, 2, 'exit 2')
  t.match(sim.stderr.join(''), /xml_curl/, 'stderr names the problem')
})
