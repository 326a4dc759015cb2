/**
 * The two worlds the lane runs each scenario in: the daemon on its built-in simulator, and the
 * daemon in `freeswitch` mode on a real FreeSWITCH 1.10.12 (configured by
 * freeswitch/prepare-conf.sh, the deploy guide's script) with SIP phones and a carrier. Both
 * offer the same handles (HTTP API, callbacks, CTI, far-end hangup and DTMF, a phone dialing)
 * and the same observation (an independent ESL connection recording channel events), so a
 * scenario is written once.
 */
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer, type AddressInfo } from 'node:net'
import { createSocket } from 'node:dgram'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, writeFile, mkdir, rm } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import WebSocket from 'ws'
import { parse as parseYaml } from 'yaml'
import { startDaemon, type Daemon } from '../../src/daemon.js'
import { silentLogger } from '../../src/util/logger.js'
import type { SimBehaviour } from '../../src/config/schema.js'
import type { Test } from 'tap'
import { EslTap } from './esl-tap.js'
import { legName } from './trace.js'
import { startPhones, type PhoneFarm, type PhoneUser } from './phones.js'

const run = promisify(execFile)
export const ROOT = resolve(import.meta.dirname, '../..')
/** The prebuilt FreeSWITCH beside the clone (CI clones with `shared/` next to it). */
export const FS_SH = process.env['COD_REALFS_FS_SH'] ?? resolve(ROOT, '../shared/freeswitch-dist/fs.sh')
export const DOMAIN = 'example.test'
export const AUTH = `Basic ${Buffer.from(`${DOMAIN}:demo-token-example-test`).toString('base64')}`

export interface Callback {
  readonly at: number
  readonly body: unknown
  /** The receiver's path: `/cb` for results (callbackUrl), `/status` for status events (statusUrl). */
  readonly path: string
}

export interface World {
  readonly kind: 'sim' | 'real'
  readonly daemon: Daemon
  readonly callbackUrl: string
  /** A status_callback_url on the same receiver (its posts are in `callbacks` with path `/status`). */
  readonly statusUrl: string
  readonly callbacks: Callback[]
  readonly tap: EslTap
  /** Base URL of the lane's local application server (IVR documents, a WAV). */
  readonly appBase: string
  post(operation: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>
  cti(query: string): Promise<{ messages: unknown[]; close(): void }>
  /** The far end of this channel hangs up (a BYE from the phone or the carrier). */
  remoteHangup(uuid: string): Promise<void>
  /** A registered phone of `user` dials `destination`; resolves once the call is set up or refused. */
  dial(user: string, destination: string): Promise<void>
  /** Resolves when no channel is left on the switch. */
  idle(timeoutMs?: number): Promise<void>
  stop(): Promise<void>
}

/** Files of the lane's application server: IVR documents by path, and a WAV. */
export interface AppServer {
  base: string
  hits: Array<{ path: string; form: URLSearchParams }>
  documents: Record<string, string>
  close(): void
}

export async function startAppServer(): Promise<AppServer> {
  const hits: AppServer['hits'] = []
  const documents: Record<string, string> = {}
  const wav = makeWav(0.5)
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? ''
      hits.push({ path, form: new URLSearchParams(body) })
      if (path.endsWith('.wav')) return res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length }).end(wav)
      const doc = documents[path]
      if (doc === undefined) return res.writeHead(500).end('no such document')
      res.writeHead(200, { 'content-type': 'text/xml' }).end(doc)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, hits, documents, close: () => server.close() }
}

/** A mono 8 kHz 16-bit PCM WAV of silence, `sec` long. */
function makeWav(sec: number): Buffer {
  const samples = Math.round(8000 * sec)
  const b = Buffer.alloc(44 + samples * 2)
  b.write('RIFF', 0)
  b.writeUInt32LE(36 + samples * 2, 4)
  b.write('WAVEfmt ', 8)
  b.writeUInt32LE(16, 16)
  b.writeUInt16LE(1, 20)
  b.writeUInt16LE(1, 22)
  b.writeUInt32LE(8000, 24)
  b.writeUInt32LE(16000, 28)
  b.writeUInt16LE(2, 32)
  b.writeUInt16LE(16, 34)
  b.write('data', 36)
  b.writeUInt32LE(samples * 2, 40)
  return b
}

/** A port free for both TCP and UDP on `host` (FreeSWITCH's SIP profile binds both). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const srv = createTcpServer()
    const port = await new Promise<number>((r) => srv.listen(0, host, () => r((srv.address() as AddressInfo).port)))
    await new Promise<void>((r) => srv.close(() => r()))
    const udp = createSocket('udp4')
    const ok = await new Promise<boolean>((r) => {
      udp.once('error', () => r(false))
      udp.bind(port, host, () => r(true))
    })
    if (ok) await new Promise<void>((r) => udp.close(() => r()))
    if (ok) return port
  }
}

interface LaneConfig {
  dir: string
  eslPassword: string
  daemonYaml: (mode: 'simulator' | 'freeswitch', eslPort: number) => string
  users: PhoneUser[]
  pstn: Record<string, SimBehaviour>
}

/**
 * The lane's configuration: the shipped daemon.yaml and example domain, with the lane's
 * application server allowed (ivr.fetch_allow loopback), an extension bound to its document,
 * and `extra` applied to the domain YAML text.
 */
/**
 * The lane's changes to the shipped example domain: a channel limit of 4 (one scenario reaches it
 * with a call between two phones), a destination timeout of 4 s, a user whose only terminal
 * never answers (issue 13 D3), and a ring-all group (issue 31).
 *
 * Why 4 and not less: FreeSWITCH counts an originate's call_timeout in whole seconds of the epoch
 * (switch_ivr_originate.c: `elapsed = switch_epoch_time_now(NULL) - start`, timed out when
 * `elapsed >= timelimit_sec`), so a timeout of N s ends a ring after anything between N-1 and N s.
 * With 3, bob (who answers after 2 s) lost the race whenever his ring began late in a second: a
 * CI run saw his DID call end NO_ANSWER after 2.02 s. 4 leaves him a whole second.
 */
const laneDomain = (y: string): string =>
  y
    .replace('channel_limit: 20', 'channel_limit: 4\ndestination_timeout: 4')
    // A group that never records (test/realfs/recording.ts).
    .replace('answer_timeout: 45, member_answer_timeout: 10 }', 'answer_timeout: 45, member_answer_timeout: 10,\n      recording: { mode: never } }')
    .replace(
      'groups:\n',
      '  - { id: "5", name: erin, label: Erin, extension: "1005", password: erin-sip-secret,\n      sim: { terminals: [ { behaviour: no_answer } ] } }\ngroups:\n',
    )
    // Issue 31 (test/realfs/ring-all.ts): a ring-all group of three members, dave unregistered,
    // alice and frank two terminals each (frank's never answer), that may also be hunted; last of
    // the groups, so that no user's first group changes.
    .replace(
      'groups:\n',
      '  - { id: "6", name: frank, label: Frank, extension: "1006", password: frank-sip-secret,\n      sim: { terminals: [ { behaviour: no_answer }, { behaviour: no_answer } ] } }\ngroups:\n',
    )
    .replace(
      'extensions:\n',
      '  - { id: "12", name: ringers, label: Ringers, extension: "2012", members: [ dave, alice, frank ],\n' +
        '      answer_timeout: 20, member_answer_timeout: 5, strategy: ring_all, strategies: [ ring_all, hunt ] }\nextensions:\n',
    )

export async function laneConfig(app: AppServer, eslPassword: string, xmlCurlPassword: string, extra: (domainYaml: string) => string = laneDomain): Promise<LaneConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'cod-realfs-'))
  await mkdir(join(dir, 'domains'))
  const shipped = await readFile(join(ROOT, 'conf/daemon.yaml'), 'utf8')
  const domain = extra(
    (await readFile(join(ROOT, 'conf/domains/example.test.yaml'), 'utf8'))
      .replace('extensions:\n', `extensions:\n  - { number: "3002", xml_url: "${app.base}/ext" }\n`)
      .replace('    default: { answer_after: 1 }\n', '    default: { answer_after: 1 }\n    "0355556666": { answer_after: 1, dtmf: "1" }\n'),
  )
  await writeFile(join(dir, 'domains', `${DOMAIN}.yaml`), domain)
  const parsed = parseYaml(domain) as {
    users: Array<{ name: string; password: string; sim?: { terminals: SimBehaviour[] } }>
    sim?: { pstn?: Record<string, SimBehaviour> }
  }
  return {
    dir,
    eslPassword,
    users: parsed.users.map((u) => ({ name: u.name, password: u.password, terminals: u.sim?.terminals ?? [{ answer_after: 1 }] })),
    pstn: parsed.sim?.pstn ?? {},
    daemonYaml: (mode, eslPort) =>
      shipped
        .replace('mode: simulator', `mode: ${mode}`)
        .replace('port: 8021', `port: ${eslPort}`)
        .replace('password: ClueCon', `password: ${eslPassword}`)
        .replace('password: change-me-xml-curl', `password: ${xmlCurlPassword}`)
        // GetInput's speech goes to mod_test's `test` engine (test/realfs/ivr-record-input.ts loads the module).
        .replace('ivr: { fetch_allow: [] }', 'ivr: { fetch_allow: ["127.0.0.1/32"], asr: { engine: test } }')
        .replace('log: { level: info }', 'log: { level: warn }'),
  }
}

async function common(kind: World['kind'], daemon: Daemon, tap: EslTap, app: AppServer, extra: {
  remoteHangup: (uuid: string) => Promise<void>
  dial: (user: string, destination: string) => Promise<void>
  stop: () => Promise<void>
}): Promise<World> {
  const callbacks: Callback[] = []
  const receiver: Server = createServer((req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString()))
    req.on('end', () => {
      callbacks.push({ at: Date.now(), body: JSON.parse(text) as unknown, path: (req.url ?? '').split('?')[0] ?? '' })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`
  const statusUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/status`
  return {
    kind,
    daemon,
    callbackUrl,
    statusUrl,
    callbacks,
    tap,
    appBase: app.base,
    async post(operation, body) {
      const res = await fetch(`${daemon.baseUrl}/api/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: JSON.stringify(body),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    },
    async cti(query) {
      const ws = new WebSocket(`${daemon.baseUrl.replace('http', 'ws')}/api/ws_cti?${query}`, { headers: { authorization: AUTH } })
      const messages: unknown[] = []
      ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as unknown))
      await new Promise<void>((res, rej) => {
        ws.once('open', () => res())
        ws.once('error', rej)
      })
      return { messages, close: () => ws.close() }
    },
    remoteHangup: extra.remoteHangup,
    dial: extra.dial,
    async idle(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const text = await tap.api('show channels as json')
        if (/"row_count":\s*0/.test(text)) return
        if (Date.now() > deadline) throw new Error(`channels still up: ${text}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    async stop() {
      tap.close()
      await daemon.stop()
      await new Promise<void>((r) => receiver.close(() => r()))
      await extra.stop()
    },
  }
}

export async function startSimWorld(cfg: LaneConfig, app: AppServer, timeScale: number): Promise<World> {
  const file = join(cfg.dir, 'daemon-sim.yaml')
  await writeFile(file, cfg.daemonYaml('simulator', 8021))
  const eslPort = await freePort()
  const started = await startDaemon({ configFile: file, logger: silentLogger(), httpPort: 0, simulatorPort: eslPort, simulatorTimeScale: timeScale, journalDir: join(cfg.dir, 'journal-sim') })
  if (!started.ok) throw new Error(started.error.join('\n'))
  const daemon = started.value
  const sim = daemon.simulator
  if (sim === undefined) throw new Error('no simulator')
  await waitUntil('the ESL link', () => daemon.pbx.isConnected(), 5000)
  const tap = await EslTap.open(eslPort, cfg.eslPassword)
  return common('sim', daemon, tap, app, {
    async remoteHangup(uuid) {
      sim.remoteHangup(uuid)
    },
    async dial(user, destination) {
      await sim.placeInboundCall({ domain: DOMAIN, fromUser: user, destination })
    },
    async stop() {},
  })
}

/**
 * The lane's scenarios on the simulator alone, for npm test (test/e2e/): the application server
 * and the simulator's world, started before the file's tests and closed after them.
 */
export function simLane(t: Test, timeScale = 0.05): { readonly app: AppServer; readonly w: World } {
  let app: AppServer | undefined
  let w: World | undefined
  let dir: string | undefined
  t.before(async () => {
    app = await startAppServer()
    const cfg = await laneConfig(app, 'sim-esl-password', 'sim-xml-curl-password')
    dir = cfg.dir
    w = await startSimWorld(cfg, app, timeScale)
  })
  t.teardown(async () => {
    await w?.stop()
    app?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the simulator lane is not started (used outside a test)')
    return v
  }
  return {
    get app() {
      return started(app)
    },
    get w() {
      return started(w)
    },
  }
}

export async function waitUntil<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = probe()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** FreeSWITCH processes started by this lane, stopped by PID even when the lane fails. */
const started = new Set<number>()
process.on('exit', () => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

/**
 * A detached shell that outlives this process: when the lane dies without stopping FreeSWITCH
 * (a test runner's timeout kills it with a signal, which skips 'exit' handlers), it stops the
 * FreeSWITCH it was given by PID.
 */
function watchdog(fsPid: number): () => void {
  // Only that PID, and only while it is still a freeswitch (a PID is not reused meanwhile).
  const alive = `grep -q freeswitch /proc/${fsPid}/cmdline 2>/dev/null`
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${alive} && kill -TERM ${fsPid}; sleep 8; ${alive} && kill -KILL ${fsPid}; exit 0`
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' })
  child.unref()
  // Once the lane stopped FreeSWITCH itself, the watchdog (started here, by its PID) ends too.
  return () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGTERM')
  }
}

export async function stopFreeswitch(state: string): Promise<void> {
  const pidFile = join(state, 'run/freeswitch.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    started.delete(pid)
    return
  }
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0)
    } catch {
      started.delete(pid)
      return
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  process.kill(pid, 'SIGKILL')
  started.delete(pid)
}

export interface RealWorld extends World {
  readonly state: string
  readonly log: string
  /** The carrier sends a call to a DID (real switch only: the simulator has no carrier). */
  carrierCall(did: string): Promise<{ callId: string; status: number }>
  /** The switch's Event Socket port (the lane's password), for a connection of a test's own. */
  readonly eslPort: number
  /** A lane phone of `user` REGISTERs again for `expires` s (0: it unregisters). */
  reRegister(user: string, expires: number): Promise<number>
}

export async function startRealWorld(cfg: LaneConfig, app: AppServer, secrets: { esl: string; xmlCurl: string }): Promise<RealWorld> {
  const [httpPort, xmlCurlPort, eslPort, sipPort, carrierPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort('127.0.0.2')]
  const rtpBase = 20000 + 2 * Math.floor(Math.random() * 15000)
  const home = (await run('bash', [FS_SH, 'home'])).stdout.trim()
  const conf = join(cfg.dir, 'fs-conf')
  const state = join(cfg.dir, 'fs-state')
  // The deploy guide's steps, as its script runs them.
  await run('bash', [
    join(ROOT, 'freeswitch/prepare-conf.sh'),
    '--vanilla', join(home, 'conf-vanilla'), '--out', conf, '--domain', DOMAIN,
    '--esl-password', secrets.esl, '--esl-port', String(eslPort),
    // The daemon's xml_curl listener (its own port, apart from the API: docs/deploy.md "Listeners").
    '--xml-curl-url', `http://127.0.0.1:${xmlCurlPort}/freeswitch/xml_curl`, '--xml-curl-credentials', `freeswitch:${secrets.xmlCurl}`,
    '--external-ip', '127.0.0.1', '--local-ip', '127.0.0.1', '--sip-port', String(sipPort),
    '--rtp-ports', `${rtpBase}-${rtpBase + 400}`, '--carrier', `127.0.0.2:${carrierPort}`,
  ])
  const file = join(cfg.dir, 'daemon-real.yaml')
  await writeFile(file, cfg.daemonYaml('freeswitch', eslPort))
  await run('bash', [FS_SH, 'start', conf, state], { env: { ...process.env, FS_ESL_PORT: String(eslPort) } })
  const pid = Number(readFileSync(join(state, 'run/freeswitch.pid'), 'utf8').trim())
  started.add(pid)
  const stopWatchdog = watchdog(pid)
  let daemon: Daemon | undefined
  let phones: PhoneFarm | undefined
  try {
    const s = await startDaemon({ configFile: file, logger: silentLogger(), httpPort, xmlCurlPort, journalDir: join(cfg.dir, 'journal-real') })
    if (!s.ok) throw new Error(s.error.join('\n'))
    daemon = s.value
    const d = daemon
    await waitUntil('the ESL link', () => d.pbx.isConnected(), 10_000)
    phones = await startPhones({
      domain: DOMAIN,
      server: { host: '127.0.0.1', port: sipPort },
      users: cfg.users,
      pstn: cfg.pstn,
      carrier: { address: '127.0.0.2', port: carrierPort },
      ports: (address) => freePort(address),
    })
  } catch (e) {
    await phones?.stop()
    await daemon?.stop()
    await stopFreeswitch(state)
    stopWatchdog()
    throw e
  }
  const p = phones
  const tap = await EslTap.open(eslPort, secrets.esl)
  const callIdOf = (uuid: string) => {
    for (let i = tap.events.length - 1; i >= 0; i--) {
      const h = tap.events[i]?.headers
      if (h?.['Unique-ID'] === uuid && h['variable_sip_call_id'] !== undefined) return h['variable_sip_call_id']
    }
    return undefined
  }
  // A far end with `dtmf` presses its digits once a digit collection runs on its leg, as the
  // simulator's far ends do (src/sim/apps.ts startFarEndDtmf).
  const dtmfSent = new Set<string>()
  tap.onEvent((e) => {
    if (e.name !== 'CHANNEL_EXECUTE' || e.headers['Application'] !== 'play_and_get_digits') return
    const uuid = e.headers['Unique-ID'] ?? ''
    // The number from the channel's name: after the dialplan transfer the destination is cod_route.
    const digits = cfg.pstn[legName(e.headers).slice(2)]?.dtmf
    const callId = callIdOf(uuid)
    if (digits === undefined || callId === undefined || dtmfSent.has(uuid)) return
    dtmfSent.add(uuid)
    setTimeout(() => void p.dtmf(callId, digits), 200)
  })
  const world = await common('real', daemon, tap, app, {
    async remoteHangup(uuid) {
      const callId = callIdOf(uuid)
      if (callId === undefined || !(await p.bye(callId))) throw new Error(`no phone holds the call of ${uuid}`)
    },
    async dial(user, destination) {
      await p.dial(user, destination)
    },
    async stop() {
      await p.stop()
      await stopFreeswitch(state)
      stopWatchdog()
      await rm(cfg.dir, { recursive: true, force: true })
    },
  })
  return Object.assign(world, {
    state,
    log: join(state, 'log/freeswitch.log'),
    carrierCall: (did: string) => p.carrierCall('0399990000', did),
    eslPort,
    reRegister: (user: string, expires: number) => p.reRegister(user, expires),
  })
}
