/**
 * Abuse: a generated corpus of hostile requests (corpus.ts) fired at the API of a running
 * daemon with its simulator. The daemon stays up, every answer is a well-formed error of
 * docs/design.md "Error ids and statuses" with the status of its id, no refused request reaches
 * FreeSWITCH, and the hostile text of accepted free-text fields never appears in an ESL command.
 */
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ERROR_STATUS } from '../../src/api/errors.js'
import type { Daemon } from '../../src/daemon.js'
import { parseOriginate, withoutOwnRecords } from '../pbx/fs-model.js'
import { startTestDaemon } from '../support/daemon.js'
import { BASES, MARKERS, basic, DOMAIN, TOKEN, freeTextCorpus, refusedCorpus, type AbuseRequest } from './corpus.js'

const CONFIG = fileURLToPath(new URL('./fixtures/daemon.yaml', import.meta.url))
const CONCURRENCY = 16

interface Answer {
  readonly req: AbuseRequest
  readonly status: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: string
}

function send(base: URL, agent: Agent, r: AbuseRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...r.headers }
    if (r.body !== undefined) headers['content-length'] = String(r.body.length)
    const req = request({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ req: r, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(r.body)
  })
}

async function fire(d: Daemon, corpus: readonly AbuseRequest[]): Promise<Answer[]> {
  const base = new URL(d.baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const answers: Answer[] = new Array<Answer>(corpus.length)
  let next = 0
  const worker = async () => {
    while (next < corpus.length) {
      const i = next++
      const r = corpus[i] as AbuseRequest
      try {
        answers[i] = await send(base, agent, r)
      } catch (e) {
        // A server that closed the connection on a bad request: retried once on a fresh socket.
        answers[i] = await send(base, new Agent({ keepAlive: false }), r).catch((e2: unknown) => {
          throw new Error(`${r.name}: ${String(e)} / ${String(e2)}`)
        })
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  agent.destroy()
  return answers
}

/**
 * The error shape of docs/design.md "Error ids and statuses": exactly {result_code: 500, error:
 * {id, description}}, the id's status, JSON.
 */
function errorProblem(a: Answer): string | undefined {
  if (a.req.method === 'HEAD') return a.status === 405 ? undefined : `HEAD answered ${a.status}`
  let body: unknown
  try {
    body = JSON.parse(a.body)
  } catch {
    return `not JSON: ${a.body.slice(0, 100)}`
  }
  if (!/^application\/json/.test(String(a.headers['content-type']))) return `content type ${String(a.headers['content-type'])}`
  const b = body as { result_code?: unknown; error?: { id?: unknown; description?: unknown } }
  if (Object.keys(b).sort().join() !== 'error,result_code' || b.result_code !== 500) return `not an error body: ${a.body.slice(0, 200)}`
  const e = b.error ?? {}
  if (Object.keys(e).sort().join() !== 'description,id') return `error has other fields: ${a.body.slice(0, 200)}`
  if (typeof e.id !== 'string' || !(e.id in ERROR_STATUS)) return `unknown error id ${String(e.id)}`
  if (typeof e.description !== 'string' || e.description === '') return 'no description'
  if (ERROR_STATUS[e.id as keyof typeof ERROR_STATUS] !== a.status) return `status ${a.status} for ${e.id}`
  if (a.status === 401 && a.headers['www-authenticate'] === undefined) return '401 without WWW-Authenticate'
  if (a.status === 405 && a.headers.allow === undefined) return '405 without Allow'
  return undefined
}

/** What the daemon sends (pbx/connection.ts, pbx/commands.ts); anything else came from a request. */
const ALLOWED_COMMANDS = /^(auth \S+|event json [A-Z_ ]+|filter (delete )?(Event-Name [A-Z_]+|Event-Name \/\.\/|Application-UUID-Name cod-execute)|bgapi (status|originate|uuid_kill|uuid_getvar|uuid_setvar|show|hupall|uuid_record)( .*)?|api (sofia_contact|hash) .*|api fsctl sps|api uuid_exists [0-9a-f-]{36})$/s

t.test('hostile requests', async (t) => {
  t.setTimeout(60000)
  const d = await startTestDaemon(t, { configFile: CONFIG, simulatorPort: 0, simulatorTimeScale: 0.05 })
  const sim = d.simulator
  if (sim === undefined) throw new Error('simulator mode expected')
  t.ok(d.pbx.isConnected(), 'connected')

  // ---- phase 1: everything refused, nothing reaches FreeSWITCH
  const corpus = refusedCorpus()
  t.ok(corpus.length > 1000 && corpus.length < 3000, `${corpus.length} refused-corpus requests`)
  const before = sim.commands.length
  const t0 = Date.now()
  const answers = await fire(d, corpus)
  t.comment(`${corpus.length} requests in ${Date.now() - t0} ms`)
  const problems: string[] = []
  for (const a of answers) {
    const p = errorProblem(a)
    if (p !== undefined) problems.push(`${a.req.name}: ${p}`)
    else if (a.status >= 500) problems.push(`${a.req.name}: server error ${a.status} ${a.body.slice(0, 200)}`)
    else if (a.req.status !== undefined && a.status !== a.req.status) problems.push(`${a.req.name}: ${a.status}, expected ${a.req.status}: ${a.body.slice(0, 200)}`)
  }
  t.same(problems.slice(0, 30), [], `every answer a well-formed refusal (${problems.length} problems)`)
  const statuses = new Map<number, number>()
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)

  const phase1 = sim.commands.slice(before).map((c) => c.text)
  t.same(phase1.filter((c) => c.includes('originate')), [], 'no originate reached the simulator')
  t.same(phase1.filter((c) => MARKERS.some((m) => c.includes(m))), [], 'no command carries injected text')
  t.same(phase1.filter((c) => !ALLOWED_COMMANDS.test(c)), [], 'only the daemon’s own commands')
  const healthz = await fetch(`${d.baseUrl}/healthz`)
  t.equal(healthz.status, 200, 'still up and connected after the corpus')

  // ---- the bases are accepted: the refusals above are the mutations' doing
  const start2 = sim.commands.length
  const bases = await fire(
    d,
    Object.entries(BASES).map(([op, body]) => ({
      name: `base ${op}`,
      method: 'POST',
      path: `/api/${op}`,
      headers: { authorization: basic(DOMAIN, TOKEN), 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(body)),
    })),
  )
  t.same(bases.map((a) => `${a.req.name} ${a.status}`), Object.keys(BASES).map((op) => `base ${op} 200`), 'every base request is accepted')

  // ---- phase 2: hostile free text in otherwise valid requests
  const free = await fire(d, freeTextCorpus())
  const accepted = new Map<string, number>()
  const freeProblems: string[] = []
  for (const a of [...free, ...bases]) {
    if (a.status === 200) {
      const body = JSON.parse(a.body) as { result_code?: unknown; uuids?: unknown }
      if (body.result_code !== 0 || !Array.isArray(body.uuids) || body.uuids.length === 0) freeProblems.push(`${a.req.name}: odd success ${a.body}`)
      accepted.set(String(a.headers['x-request-id']), Array.isArray(body.uuids) ? body.uuids.length : 0)
      continue
    }
    const p = errorProblem(a)
    if (p !== undefined || a.status >= 500) freeProblems.push(`${a.req.name}: ${p ?? a.status}`)
  }
  t.same(freeProblems.slice(0, 30), [], 'accepted or refused, never anything else')
  t.ok(accepted.size > 50, `${accepted.size} free-text requests accepted`)
  // Every terminal and number is busy: the calls end at once.
  for (let i = 0; i < 300 && sim.liveChannels().length > 0; i++) await new Promise((r) => setTimeout(r, 20))

  // The one `$` the daemon writes itself, taken out: each leg's hangup hook records `${hangup_cause}`
  // into mod_hash (pbx/commands.ts hangupRecordVar), built only from UUIDs and the domain, with the
  // `origination_nested_vars=true` that lets it through; nothing else may carry either.
  const phase2 = sim.commands.slice(start2).map((c) => withoutOwnRecords(c.text))
  t.same(phase2.filter((c) => MARKERS.some((m) => c.includes(m))), [], 'no ESL command carries the hostile text')
  t.same(phase2.filter((c) => !ALLOWED_COMMANDS.test(c)), [], 'only the daemon’s own commands')
  const originates = phase2.filter((c) => c.startsWith('bgapi originate '))
  const seen = new Set<string>()
  const structure: string[] = []
  for (const text of originates) {
    const o = parseOriginate(text.slice('bgapi '.length))
    const requestId = o.globals.get('cod_request_id') ?? ''
    seen.add(requestId)
    if (!accepted.has(requestId)) structure.push(`originate for a request that was not accepted: ${requestId}`)
    if (o.enterprise || o.nestedVars) structure.push(`enterprise/nested: ${text}`)
    if (o.groups.length !== 1) structure.push(`failover groups: ${text}`)
    if (o.args.slice(1).join(' ') !== `cod_route XML ${DOMAIN}`) structure.push(`target changed: ${o.args.slice(1).join(' ')}`)
    for (const leg of o.groups.flat()) {
      if (!/^(sofia\/internal\/sip:[a-z]+@127\.0\.0\.1:[0-9]+|sofia\/gateway\/pstn-abuse\/[0-9]+)$/.test(leg.endpoint)) structure.push(`endpoint ${leg.endpoint}`)
    }
    for (const [k, v] of [...o.globals, ...o.groups.flat().flatMap((l) => [...l.vars])]) {
      // The leg's own record of its answer (src/pbx/leg-record.ts): a fixed text around our ids.
      if (k === 'api_on_answer') {
        if (!/^hash insert\/cod_[a-z0-9.-]+\/[0-9a-f-]{36}\.[0-9a-f-]{36}\/answered$/.test(v)) structure.push(`value of ${k}: ${v}`)
        continue
      }
      if (!/^(cod_[a-z_]+|origination_[a-z_]+|originate_timeout|ignore_early_media|sip_h_[A-Za-z-]+)$/.test(k)) structure.push(`variable ${k}`)
      if (/[${}[\]<>|^'"\\]/.test(v) && k !== 'sip_h_Call-Info' && k !== 'sip_h_Alert-Info') structure.push(`value of ${k}: ${v}`)
    }
  }
  t.same(structure.slice(0, 30), [], 'every originate keeps its structure: our legs, our variables, our target')
  t.same([...accepted.keys()].filter((id) => !seen.has(id)), [], 'every accepted request was originated')
  t.equal((await fetch(`${d.baseUrl}/healthz`)).status, 200, 'still up')
})

t.test('garbage that is not HTTP', async (t) => {
  t.setTimeout(20000)
  const d = await startTestDaemon(t, { configFile: CONFIG, simulatorPort: 0, simulatorTimeScale: 0.05 })
  const { connect } = await import('node:net')
  const u = new URL(d.baseUrl)
  const payloads = [
    Buffer.from('GARBAGE\r\n\r\n'),
    Buffer.from('POST /api/call_user HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
    Buffer.from('POST /api/call_user HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    Buffer.from(`POST /api/call_user HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20000)}\r\n\r\n`),
    Buffer.from('POST /api/call_user HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \u0000\r\n\r\n'),
    Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), // a TLS ClientHello
    Buffer.alloc(65536, 0),
  ]
  for (const p of payloads) {
    await new Promise<void>((resolve) => {
      const s = connect(Number(u.port), u.hostname, () => s.end(p))
      s.on('data', () => {})
      s.on('error', () => resolve())
      s.on('close', () => resolve())
      s.setTimeout(2000, () => s.destroy())
    })
  }
  const res = await fetch(`${d.baseUrl}/healthz`)
  t.equal(res.status, 200, 'still up')
})
