/**
 * xml_curl path: the documents FreeSWITCH fetches from the daemon (dialplan of an originated,
 * answered leg; directory for a SIP REGISTER) per second, with p50/p99, beside a bare Node HTTP
 * server returning a fixed document of the same size. The request bodies are the forms a real
 * FreeSWITCH 1.10.12 posted (test/xmlcurl/fixtures, from the captures), moved to bench.test.
 */
import { readFileSync } from 'node:fs'
import { DOMAIN, XML_CURL } from './lib/config.js'
import { perRequest, withCpu } from './lib/cpu.js'
import { runLoad, type LoadResult } from './lib/load.js'
import { startWorker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const CONCURRENCY = 32
const AUTH = `Basic ${Buffer.from(`${XML_CURL.username}:${XML_CURL.password}`).toString('base64')}`
const NOT_FOUND_MARK = 'status="not found"'
const CAPTURES = new URL('../test/xmlcurl/fixtures/', import.meta.url)

function form(name: string, changes: Record<string, string>): string {
  const f = new URLSearchParams(readFileSync(new URL(`${name}.form`, CAPTURES), 'utf8'))
  for (const [k, v] of f) if (v.includes('example.test')) f.set(k, v.replaceAll('example.test', DOMAIN))
  for (const [k, v] of Object.entries(changes)) f.set(k, v)
  return f.toString()
}

/**
 * The answered originated leg of
 * test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt, as a call_user leg of
 * bench.test bound for a PSTN number.
 */
const dialplanForm = (i: number) =>
  form('04-dialplan-originated', {
    'Hunt-Context': DOMAIN,
    'Caller-Context': DOMAIN,
    'Hunt-Destination-Number': 'cod_route',
    'Caller-Destination-Number': 'cod_route',
    variable_cod_request_id: `bench-${i}`,
    variable_cod_domain: DOMAIN,
    variable_cod_role: 'originator',
    variable_cod_operation: 'call_user',
    variable_cod_dest_kind: 'pstn',
    variable_cod_dest_value: '0311112222',
  })

/**
 * The REGISTER authentication of test/fixtures/freeswitch/xml_curl/01-register-1001.txt, for a user
 * of bench.test.
 */
const directoryForm = (i: number) => {
  const user = `u${i % 200}`
  return form('01-sip-auth-register', { user, sip_auth_username: user, sip_from_user: user, sip_to_user: user, sip_contact_user: user, domain: DOMAIN })
}

export async function benchXmlCurl(ctx: BenchContext): Promise<BenchOutput> {
  const warmupMs = dur(ctx, 1000)
  const durationMs = dur(ctx, 5000)
  // Pre-built bodies: the generator should not spend its time building forms.
  const dialplanBodies = Array.from({ length: 256 }, (_, i) => dialplanForm(i))
  const directoryBodies = Array.from({ length: 256 }, (_, i) => directoryForm(i))
  const stack = await startStack({
    users: 200,
    channelLimit: 100000,
    terminal: { answer_after: 0 },
    pstn: { answer_after: 0 },
    ...(ctx.profileDir !== undefined ? { profile: { dir: ctx.profileDir, name: 'xmlcurl' } } : {}),
  })
  const url = stack.xmlCurlUrl
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: AUTH }
  const runs: Record<string, { daemon: LoadResult & { daemon_cpu_ms_per_document: number }; document_bytes: number; request_bytes: number }> = {}
  let sample: Record<string, string> = {}
  try {
    for (const [section, bodies] of [
      ['dialplan', dialplanBodies],
      ['directory', directoryBodies],
    ] as const) {
      const probe = await fetch(url, { method: 'POST', headers, body: bodies[0] })
      const doc = await probe.text()
      if (probe.status !== 200 || doc.includes(NOT_FOUND_MARK)) throw new Error(`${section}: the daemon did not serve a document (${probe.status}): ${doc.slice(0, 300)}`)
      sample = { ...sample, [section]: doc }
      ctx.log(`xmlcurl: ${section} documents (${Buffer.byteLength(doc)} bytes) at concurrency ${CONCURRENCY}`)
      const { value: daemon, cpu_ms } = await withCpu({ daemon: stack.daemon }, () =>
        runLoad({
          url,
          headers,
          body: (i) => bodies[i % bodies.length] ?? '',
          concurrency: CONCURRENCY,
          warmupMs,
          durationMs,
          ok: (status, text) => status === 200 && !text.includes(NOT_FOUND_MARK),
        }),
      )
      runs[section] = { daemon: { ...daemon, daemon_cpu_ms_per_document: perRequest(cpu_ms.daemon, daemon.completed_total) }, document_bytes: Buffer.byteLength(doc), request_bytes: Buffer.byteLength(bodies[0] ?? '') }
    }
  } finally {
    await stack.stop()
  }

  const baselines: Record<string, LoadResult & { server_cpu_ms_per_document: number }> = {}
  for (const [section, bodies] of [
    ['dialplan', dialplanBodies],
    ['directory', directoryBodies],
  ] as const) {
    const doc = sample[section] ?? ''
    ctx.log(`xmlcurl: baseline, bare Node HTTP server returning a fixed ${Buffer.byteLength(doc)}-byte document`)
    const server = await startWorker('http-baseline', { args: { payload: doc, contentType: 'text/xml' } })
    try {
      const { value, cpu_ms } = await withCpu({ server }, () =>
        runLoad({
          url: `${String(server.info.url)}/freeswitch/xml_curl`,
          headers,
          body: (i) => bodies[i % bodies.length] ?? '',
          concurrency: CONCURRENCY,
          warmupMs,
          durationMs,
          ok: (status) => status === 200,
        }),
      )
      baselines[section] = { ...value, server_cpu_ms_per_document: perRequest(cpu_ms.server, value.completed_total) }
    } finally {
      await server.stop()
    }
  }

  const result: Record<string, unknown> = { what: 'POST {xml_curl.path}/xml_curl with the forms FreeSWITCH sends (fixtures xml_curl/04-originate-1002-xml-default, 01-register-1001), closed loop', concurrency: CONCURRENCY }
  const summary: string[] = []
  for (const section of ['dialplan', 'directory'] as const) {
    const r = runs[section]
    const b = baselines[section]
    if (r === undefined || b === undefined) continue
    const ratios = {
      daemon_cpu_per_document_vs_bare_http: ratio(r.daemon.daemon_cpu_ms_per_document, b.server_cpu_ms_per_document),
      daemon_rps_vs_bare_http: ratio(r.daemon.requests_per_s, b.requests_per_s),
      daemon_p50_vs_bare_http: ratio(r.daemon.latency.p50_ms, b.latency.p50_ms),
      daemon_p99_vs_bare_http: ratio(r.daemon.latency.p99_ms, b.latency.p99_ms),
    }
    result[section] = { ...r, baseline_bare_http: b, ratios }
    summary.push(
      `${section.padEnd(9)} ${r.daemon.requests_per_s} docs/s  p50 ${r.daemon.latency.p50_ms} ms  p99 ${r.daemon.latency.p99_ms} ms  (${r.document_bytes} B, errors ${r.daemon.errors}; ${r.daemon.daemon_cpu_ms_per_document} ms CPU each)`,
      `  bare HTTP ${b.requests_per_s} docs/s  p50 ${b.latency.p50_ms} ms  p99 ${b.latency.p99_ms} ms  (${b.server_cpu_ms_per_document} ms CPU each)  -> daemon at ${ratios.daemon_rps_vs_bare_http}x its rate, ${ratios.daemon_cpu_per_document_vs_bare_http}x its CPU`,
    )
  }
  return {
    result,
    summary,
    ...(ctx.profileDir !== undefined ? { profiles: { daemon: 'xmlcurl-daemon', simulator: 'xmlcurl-sim' } } : {}),
  }
}
