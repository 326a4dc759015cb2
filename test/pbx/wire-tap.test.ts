/**
 * Wire tap (issue 12 item 7): every byte the daemon writes to FreeSWITCH, recorded by a TCP
 * proxy between the daemon and the simulator, while an attack corpus (newlines, `\r\n\r\n`
 * framing, `{}` `[]` `,` `'` `^^:` separators, `${}` expansions, `|`, unicode tricks, long
 * strings; test/abuse/corpus.ts plus a few) is sent through every free string field of the API
 * and of an inline IVR document. Each frame is then read as mod_event_socket.c reads it
 * (headers up to a blank line, a body of Content-Length bytes) and judged:
 *
 * - framing: a known command line, printable ASCII headers, no CR, no NUL, nothing left over
 *   (a value that smuggled a line break would leave an unknown command or a broken frame);
 * - ESL commands (bgapi): printable ASCII; once the daemon's own hangup records are taken out
 *   of an originate with the `origination_nested_vars=true` that lets them through
 *   (pbx/commands.ts hangupRecordVar; test/pbx/fs-model.ts withoutOwnRecords), no `$`, no `:_:`,
 *   no `origination_nested_vars=true`; originates parse into the expected structure with the
 *   independent model of test/pbx/fs-model.ts;
 * - application bodies (sendmsg execute): valid UTF-8, no control character, no `$`, and the
 *   speak text without `{ } \` (mod_flite/TTS parameters).
 *
 * The count of unsafe frames must be 0, and enough traffic must have flowed (originates,
 * IVR speak commands) for the test to mean something.
 */
import { Buffer } from 'node:buffer'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config/load.js'
import { daemonSchema } from '../../src/config/schema.js'
import type { Daemon } from '../../src/daemon.js'
import { status } from '../../src/pbx/commands.js'
import { Simulator } from '../../src/sim/index.js'
import { silentLogger } from '../../src/util/logger.js'
import { INJECTIONS, UNICODE } from '../abuse/corpus.js'
import { startTestDaemon } from '../support/daemon.js'
import { waitFor } from '../support/wait.js'
import { parseOriginate, withoutOwnRecords } from './fs-model.js'

// A few hundred calls through a proxy: well under a minute alone, slower on a shared machine.
t.setTimeout(150_000)

const DOMAIN = 'wiretap.test'
const TOKEN = 'wiretap-token-0123456789'
const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`
const TIME_SCALE = 0.02

/** The attack corpus: the abuse suite's injections and unicode, framing attacks and long strings. */
const CORPUS: readonly string[] = [
  ...INJECTIONS,
  ...UNICODE,
  '\r\n\r\n',
  'x\r\n\r\napi system id\r\n\r\n',
  'Content-Length: 5\n\nhello',
  '^^:origination_uuid=x:y',
  "a',origination_caller_id_number=999,'b",
  '{origination_nested_vars=true}${system(id)}',
  '|',
  '&park()',
  'A'.repeat(3000),
  '$'.repeat(400),
  '{'.repeat(200),
  `${'\u65e5\u672c'.repeat(500)}`,
]

// ------------------------------------------------------------------ the proxy

interface Tap {
  readonly port: number
  /** What the daemon wrote, per connection, in order. */
  readonly written: Buffer[][]
  close(): Promise<void>
}

async function tcpTap(target: number): Promise<Tap> {
  const written: Buffer[][] = []
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const chunks: Buffer[] = []
    written.push(chunks)
    const upstream = net.connect(target, '127.0.0.1')
    // No Nagle delay: the proxy must not slow the one-command-at-a-time ESL dialogue.
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    sockets.add(client).add(upstream)
    client.on('data', (d: Buffer) => {
      chunks.push(Buffer.from(d))
      upstream.write(d)
    })
    upstream.on('data', (d: Buffer) => client.write(d))
    const end = (): void => {
      client.destroy()
      upstream.destroy()
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as net.AddressInfo).port,
    written,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/**
 * The simulator posts xml_curl requests here before the daemon's address is known; they are
 * passed on to the daemon's xml_curl endpoint once it is (`target`).
 */
async function forwarder(): Promise<{ port: number; server: HttpServer; target: { url: string } }> {
  const target = { url: '' }
  const server = createHttpServer((req, res) => {
    const to = new URL(target.url)
    const fwd = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: `${to.pathname}${to.search}`, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    fwd.on('error', () => {
      res.statusCode = 502
      res.end()
    })
    req.pipe(fwd)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { port: (server.address() as net.AddressInfo).port, server, target }
}

// ------------------------------------------------------------------ reading the frames

interface Frame {
  readonly headers: readonly string[]
  readonly body: Buffer
}

/** Splits the daemon's byte stream as mod_event_socket.c read_packet does; `rest` is what no frame explains. */
function frames(stream: Buffer): { frames: Frame[]; rest: Buffer } {
  const out: Frame[] = []
  let at = 0
  for (;;) {
    const end = stream.indexOf('\n\n', at)
    if (end < 0) break
    const headers = stream.subarray(at, end).toString('latin1').split('\n')
    let next = end + 2
    const lengthHeader = headers.find((h) => /^content-length:/i.test(h))
    const length = lengthHeader === undefined ? 0 : Number(lengthHeader.split(':')[1]?.trim())
    if (!Number.isInteger(length) || length < 0 || next + length > stream.length) break
    const body = stream.subarray(next, next + length)
    next += length
    out.push({ headers, body })
    at = next
  }
  return { frames: out, rest: stream.subarray(at) }
}

const COMMAND_LINE = /^(auth \S+|event json [A-Z_ ]+|bgapi \S.*|sendmsg [0-9a-f-]{36}|api \S.*|exit|noevents|filter \S.*|linger( \d+)?|nolinger)$/
const HEADER_LINE = /^[A-Za-z0-9-]+: [\x20-\x7e]*$/
const PRINTABLE = /^[\x20-\x7e]*$/
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const APPS = new Set(['answer', 'set', 'export', 'unset', 'speak', 'playback', 'play_and_get_digits', 'sleep', 'bridge', 'hangup', 'endless_playback', 'ring_ready', 'transfer', 'park'])

interface Verdict {
  readonly ok: boolean
  readonly why: string
}

function judgeCommand(written: string): Verdict {
  if (!PRINTABLE.test(written)) return { ok: false, why: 'command text outside printable ASCII' }
  // The one `$` the command builder writes on purpose, and what lets it through, taken out.
  const command = withoutOwnRecords(written)
  if (command.includes('$')) return { ok: false, why: '"$" in a command' }
  if (command.includes(':_:')) return { ok: false, why: 'the enterprise delimiter' }
  // switch_ivr_originate.c switch_ivr_originate: switch_stristr("origination_nested_vars=true", data)
  // turns the `${` check off; the name alone (e.g. in a neutralised caller name) does nothing.
  if (/origination_nested_vars=true/i.test(command)) return { ok: false, why: 'origination_nested_vars=true' }
  if (command.startsWith('originate ')) {
    const p = parseOriginate(command)
    if (p.enterprise || p.nestedVars) return { ok: false, why: 'originate structure' }
    if (p.args.length !== 2 && p.args.length !== 4) return { ok: false, why: `originate has ${p.args.length} arguments` }
    if (p.groups.length !== 1) return { ok: false, why: 'a failover group appeared' }
    for (const leg of p.groups[0] ?? []) {
      if (!/^(sofia\/|user\/)/.test(leg.endpoint)) return { ok: false, why: `a leg endpoint ${JSON.stringify(leg.endpoint.slice(0, 40))}` }
      if (!leg.vars.has('origination_uuid')) return { ok: false, why: 'a leg without its origination_uuid' }
    }
    for (const name of p.globals.keys()) if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) return { ok: false, why: `a global named ${JSON.stringify(name)}` }
  }
  return { ok: true, why: '' }
}

function judgeApp(headers: readonly string[], body: Buffer): Verdict {
  const name = headers.find((h) => h.startsWith('execute-app-name: '))?.slice('execute-app-name: '.length) ?? ''
  if (!APPS.has(name)) return { ok: false, why: `application ${JSON.stringify(name)}` }
  let arg: string
  try {
    arg = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    return { ok: false, why: 'an argument that is not UTF-8' }
  }
  if (CONTROL.test(arg)) return { ok: false, why: 'a control character in an argument' }
  if (arg.includes('$')) return { ok: false, why: '"$" in an argument' }
  if (/[\uD800-\uDFFF]/u.test(arg)) return { ok: false, why: 'a lone surrogate in an argument' }
  if (name === 'speak' && /[{}\\]/.test(arg.split('|').slice(2).join('|'))) return { ok: false, why: 'TTS parameters or escapes in speak text' }
  if ((name === 'set' || name === 'export') && !/^(nolocal:)?[A-Za-z][A-Za-z0-9_-]*=[^ ,'"{}[\]|]*$/.test(arg)) return { ok: false, why: `set/export ${JSON.stringify(arg.slice(0, 60))}` }
  return { ok: true, why: '' }
}

function judgeFrame(f: Frame): Verdict {
  const [first = '', ...rest] = f.headers
  if (!COMMAND_LINE.test(first)) return { ok: false, why: `command line ${JSON.stringify(first.slice(0, 60))}` }
  if (f.headers.some((h) => h.includes('\r') || h.includes('\u0000'))) return { ok: false, why: 'CR or NUL in a header' }
  for (const h of rest) if (!HEADER_LINE.test(h)) return { ok: false, why: `header line ${JSON.stringify(h.slice(0, 60))}` }
  if (first.startsWith('bgapi ')) return judgeCommand(first.slice('bgapi '.length))
  if (first.startsWith('api ')) return judgeCommand(first.slice('api '.length))
  if (first.startsWith('sendmsg ')) {
    const command = rest.find((h) => h.startsWith('call-command: '))?.slice('call-command: '.length)
    if (command === 'execute') return judgeApp(rest, f.body)
    if (command === 'hangup') return { ok: true, why: '' }
    return { ok: false, why: `call-command ${JSON.stringify(command)}` }
  }
  return f.body.length === 0 ? { ok: true, why: '' } : { ok: false, why: 'a body on a command that takes none' }
}

// ------------------------------------------------------------------ the requests

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')
const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * The free string fields the API and an inline IVR take, with one corpus value (calling_name
 * through call_group, which hunts: its legs carry it as call_user's do).
 */
function requestsFor(s: string): Array<{ op: string; body: unknown }> {
  // encodeURIComponent throws on a lone surrogate (the API refuses those anyway).
  const enc = encodeURIComponent(/[\uD800-\uDFFF]/u.test(s) ? 'x' : s)
  const ivr =
    `<IVR><Speak>${xmlText(s)}</Speak><Set var="v" val="${xmlText(s)}"/><Speak language="en-US">v={{ v }}</Speak>` +
    `<Play>http://93.184.216.34/p.wav?q=${xmlText(enc)}</Play><GetDigits numDigits="1" timeout="1"><Speak>${xmlText(s)}</Speak></GetDigits><Hangup/></IVR>`
  return [
    { op: 'call_group', body: { group_name: 'sales', destination: 'bob', calling_name: s } },
    { op: 'call_user', body: { user_name: 'alice', destination: { called_number: '0311112222', end_user: { name: s, organization: s, avatar: s } } } },
    { op: 'call_user', body: { user_name: 'alice', destination: `{name=${enc},prefecture=${enc}}0311112222` } },
    { op: 'call_external', body: { target: { called_number: '0311112222', end_user: { id: s, name: s } }, destination: 'bob' } },
    { op: 'call_external', body: { target: '0311112222', destination: `xml_url:inline_xml://${b64(ivr)}` } },
    { op: 'call_user', body: { user_name: s, destination: s } },
  ]
}

async function post(base: string, op: string, body: unknown): Promise<number> {
  const res = await fetch(`${base}/api/${op}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await res.arrayBuffer()
  return res.status
}

/** The daemon's xml_curl endpoint: its own listener when the Daemon names one, else beside the API. */
function xmlCurlUrl(d: Daemon): string {
  for (const [k, v] of Object.entries(d)) {
    if (/xml_?curl/i.test(k) && typeof v === 'string' && /^https?:/.test(v)) return v.endsWith('/xml_curl') ? v : `${v.replace(/\/$/, '')}/freeswitch/xml_curl`
  }
  return `${d.baseUrl}/freeswitch/xml_curl`
}

t.test('wire tap: the attack corpus through every string field leaves 0 unsafe bytes on the ESL socket', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cod-wiretap-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await mkdir(join(dir, 'domains'))
  await writeFile(
    join(dir, 'domains', `${DOMAIN}.yaml`),
    [
      `name: ${DOMAIN}`,
      `api_tokens: [ "${TOKEN}" ]`,
      'privileges: [ ON_THE_FLY_IVR_ALLOWED ]',
      'channel_limit: 100000',
      'gateway: pstn-wiretap',
      'calling_numbers: [ "0501230000" ]',
      'users:',
      '  - { id: a1, name: alice, label: Alice, extension: "1001", password: alice-sip-secret, sim: { terminals: [ { answer_after: 0.2, hangup_after: 2 } ] } }',
      '  - { id: b2, name: bob, label: Bob, extension: "1002", password: bob-sip-secret, sim: { terminals: [ { answer_after: 0.2, hangup_after: 1 } ] } }',
      'groups:',
      '  - { id: g10, name: sales, label: Sales, type: HUNT, extension: "2001", members: [ alice, bob ] }',
      'sim:',
      '  pstn:',
      '    default: { answer_after: 0.2, hangup_after: 30 }',
      '',
    ].join('\n'),
  )
  // The xml_curl listener's own port, once the configuration has one (0: any free port).
  const xmlCurlShape = daemonSchema.shape.xml_curl.shape as Record<string, unknown>
  const xmlCurlPort = 'port' in xmlCurlShape ? ', port: 0' : ''

  const sim0 = { password: 'ClueCon' }
  const fwd = await forwarder()
  t.teardown(() => new Promise<void>((r) => fwd.server.close(() => r())))
  const writeConfig = async (eslPort: number): Promise<string> => {
    const file = join(dir, 'daemon.yaml')
    await writeFile(
      file,
      [
        'http: { host: 127.0.0.1, port: 0, prefix: /api }',
        `freeswitch: { mode: freeswitch, host: 127.0.0.1, port: ${eslPort}, password: ${sim0.password} }`,
        `xml_curl: { path: /freeswitch, username: freeswitch, password: wiretap-xml-curl-secret${xmlCurlPort} }`,
        'directory: domains',
        'journal: { enabled: false }',
        'log: { level: silent }',
        '',
      ].join('\n'),
    )
    return file
  }

  // The simulator first (it needs the domains), the tap in front of it, then the daemon on the tap.
  const loaded = await loadConfig(await writeConfig(1))
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.error))
  const sim = new Simulator({
    domains: loaded.value.domains,
    password: sim0.password,
    xmlCurl: { url: `http://127.0.0.1:${fwd.port}/xml_curl`, username: 'freeswitch', password: 'wiretap-xml-curl-secret' },
    timeScale: TIME_SCALE,
    logger: silentLogger(),
  })
  const simPort = await sim.listen(0)
  t.teardown(() => sim.close())
  const tap = await tcpTap(simPort)
  t.teardown(() => tap.close())
  const d = await startTestDaemon(t, { configFile: await writeConfig(tap.port), waitLink: false })
  fwd.target.url = xmlCurlUrl(d)

  // Wait for the link (auth and subscriptions went through the tap).
  await waitFor('the daemon reached the simulator through the tap', () => d.pbx.isConnected())

  const statuses = new Map<number, number>()
  const requests = CORPUS.flatMap(requestsFor)
  const sendStart = Date.now()
  for (let i = 0; i < requests.length; i += 32) {
    const batch = requests.slice(i, i + 32)
    const codes = await Promise.all(batch.map((r) => post(d.baseUrl, r.op, r.body)))
    for (const c of codes) statuses.set(c, (statuses.get(c) ?? 0) + 1)
  }
  t.comment(`sent in ${Date.now() - sendStart} ms`)
  // Let the calls run their course (IVR prompts, bridges, hangups), bounded.
  await waitFor('every call ended', () => sim.liveChannels().length === 0, 30_000)
  // The daemon writes one command at a time, in order: once one written now got its job's result,
  // every byte written before it went through the tap whole.
  const probe = status()
  if (!probe.ok) throw new Error(probe.error.reason)
  t.ok((await d.pbx.bgapi(probe.value)).ok, 'a command written after them answered')

  let total = 0
  let unsafe = 0
  let originates = 0
  let speaks = 0
  let leftover = 0
  const problems = new Map<string, number>()
  for (const chunks of tap.written) {
    const { frames: fs, rest } = frames(Buffer.concat(chunks))
    leftover += rest.length
    for (const f of fs) {
      total++
      const v = judgeFrame(f)
      if (!v.ok) {
        unsafe++
        problems.set(v.why, (problems.get(v.why) ?? 0) + 1)
      }
      if (/^bgapi originate /.test(f.headers[0] ?? '')) originates++
      if (f.headers.includes('execute-app-name: speak')) speaks++
    }
  }
  t.comment(`requests: ${requests.length} (${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}); ESL frames: ${total}, originates: ${originates}, speak: ${speaks}`)
  t.same(Object.fromEntries(problems), {}, 'no frame breaks a rule')
  t.equal(unsafe, 0, '0 unsafe frames')
  t.equal(leftover, 0, 'every byte belongs to a frame')
  t.ok((statuses.get(200) ?? 0) >= CORPUS.length, 'a good share of the corpus was accepted (it reached FreeSWITCH)')
  t.ok(originates >= CORPUS.length, `originates carried the corpus (${originates})`)
  t.ok(speaks >= CORPUS.length / 2, `IVR prompts carried the corpus (${speaks})`)
})

t.test('the frame judge can fail: hostile frames written by hand are caught', async (t) => {
  const bad = [
    'bgapi originate {a=${system(id)}}sofia/gateway/x/1 &park()\n\n',
    'bgapi uuid_kill 00000000-0000-0000-0000-000000000000\r\n\r\napi system id\n\n',
    'bgapi originate {origination_nested_vars=true}[origination_uuid=1]sofia/gateway/x/1 &park()\n\n',
    'bgapi originate [origination_uuid=1]sofia/gateway/x/1:_:sofia/gateway/y/2 &park()\n\n',
    'sendmsg 00000000-0000-0000-0000-000000000000\ncall-command: execute\nexecute-app-name: speak\ncontent-type: text/plain\ncontent-length: 20\n\nflite|kal|{volume=9}x',
    'sendmsg 00000000-0000-0000-0000-000000000000\ncall-command: execute\nexecute-app-name: system\ncontent-length: 2\n\nid',
    'sendmsg 00000000-0000-0000-0000-000000000000\ncall-command: execute\nexecute-app-name: set\ncontent-length: 9\n\na=${b(c)}',
    'api system id\nx: y\n\nnonsense',
  ]
  for (const text of bad) {
    const { frames: fs, rest } = frames(Buffer.from(text, 'utf8'))
    const caught = fs.some((f) => !judgeFrame(f).ok) || rest.length > 0 || fs.length > 1
    t.ok(caught, JSON.stringify(text.slice(0, 60)))
  }
  const good = 'bgapi uuid_kill 00000000-0000-0000-0000-000000000000 NORMAL_CLEARING\nJob-UUID: 00000000-0000-0000-0000-000000000001\n\n'
  const g = frames(Buffer.from(good))
  t.same(g.frames.map((f) => judgeFrame(f).ok), [true])
})
