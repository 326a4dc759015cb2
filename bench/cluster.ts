/**
 * The cost of the cluster path (docs/cluster.md): call_user throughput and latency of one daemon
 * with a `cluster` section (each admission runs the ADMIT script in Redis, each accepted request
 * and result is mirrored into the node's stream) against the same daemon without one (the
 * baseline), in the same run, on the same machine, alternating rounds so that a change in the
 * machine's load hits both. Each daemon runs in this process with its built-in simulator (the
 * end-to-end harness's setup, sped up), a callback receiver of its own, and a real redis-server
 * on loopback for the cluster one.
 *
 *   node --import tsx bench/cluster.ts [--quick]     (needs redis-server; results: bench/results/cluster.json)
 *
 * Also `npm run bench -- --only cluster` (bench/run.ts; skipped where redis-server is absent). Figures of a loaded machine are noisy: compare
 * the two columns of one run, not runs of different days.
 */
import { spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import YAML from 'yaml'
import { startDaemon, type Daemon } from '../src/daemon.js'
import { silentLogger } from '../src/util/logger.js'
import type { BenchContext, BenchOutput } from './context.js'
import { dur } from './context.js'
import { Redis } from 'ioredis'
import { clusterKeys } from '../src/cluster/keys.js'
import { ADMIT, runScript } from '../src/cluster/scripts.js'
import { freePort } from './lib/config.js'
import { machineFacts } from './lib/machine.js'
import { ratio, summarize, type LatencySummary } from './lib/stats.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const AUTH = `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`
const CONCURRENCY = 16
const ROUNDS = 3

interface RoundResult {
  readonly requests: number
  readonly ok: number
  readonly seconds: number
  readonly latencies: number[]
}

async function startRedis(dir: string): Promise<{ url: string; stop(): void }> {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', ''], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString()
      if (out.includes('Ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}`)))
  })
  return { url: `redis://127.0.0.1:${port}`, stop: () => void child.kill('SIGKILL') }
}

/** conf/ copied with a limit no round reaches, and (for the cluster daemon) a cluster section. */
function configCopy(dir: string, cluster: Record<string, unknown> | undefined): string {
  cpSync(join(ROOT, 'conf/daemon.yaml'), join(dir, 'daemon.yaml'))
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  const domainFile = join(dir, 'domains/example.test.yaml')
  const dom = YAML.parse(readFileSync(domainFile, 'utf8')) as Record<string, unknown>
  dom.channel_limit = 100000
  writeFileSync(domainFile, YAML.stringify(dom))
  const doc = YAML.parse(readFileSync(join(dir, 'daemon.yaml'), 'utf8')) as Record<string, unknown>
  doc.log = { level: 'silent' }
  if (cluster !== undefined) doc.cluster = cluster
  writeFileSync(join(dir, 'daemon.yaml'), YAML.stringify(doc))
  return join(dir, 'daemon.yaml')
}

async function startOne(dir: string, cluster: Record<string, unknown> | undefined): Promise<Daemon> {
  const started = await startDaemon({
    configFile: configCopy(dir, cluster),
    journalDir: join(dir, 'journal'),
    logger: silentLogger(),
    httpPort: 0,
    simulatorPort: 0,
    // bob answers after 2 simulated seconds: 20 ms.
    simulatorTimeScale: 0.01,
  })
  if (!started.ok) throw new Error(started.error.join('\n'))
  const d = started.value
  const deadline = Date.now() + 20000
  while (!d.pbx.isConnected()) {
    if (Date.now() > deadline) throw new Error('no ESL connection')
    await new Promise((r) => setTimeout(r, 20))
  }
  return d
}

async function hangUpAll(d: Daemon): Promise<void> {
  const sim = d.simulator
  for (const c of sim?.liveChannels() ?? []) sim?.remoteHangup(c.uuid)
  const deadline = Date.now() + 30000
  while ((sim?.liveChannels().length ?? 0) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
}

/** call_user bob → a PSTN number with a callback, CONCURRENCY at a time, for `ms`. */
async function round(d: Daemon, callbackUrl: string, ms: number): Promise<RoundResult> {
  const latencies: number[] = []
  let requests = 0
  let okCount = 0
  const t0 = performance.now()
  const until = t0 + ms
  let n = 0
  const worker = async () => {
    while (performance.now() < until) {
      const body = JSON.stringify({ user_name: 'bob', destination: `0390${String(n++ % 1000000).padStart(6, '0')}`, callback_url: callbackUrl })
      const s = performance.now()
      const res = await fetch(`${d.baseUrl}/api/call_user`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body })
      await res.arrayBuffer()
      latencies.push(performance.now() - s)
      requests++
      if (res.status === 200) okCount++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return { requests, ok: okCount, seconds: (performance.now() - t0) / 1000, latencies }
}

/** The ADMIT script alone, one at a time over loopback: what the cluster adds to each admission, without the daemon's noise. */
async function admitScript(url: string, count: number): Promise<LatencySummary> {
  const redis = new Redis(url)
  const keys = clusterKeys('bench')
  try {
    await redis.set(keys.since, 0)
    await redis.set(keys.lease('a'), '1')
    // Nine other nodes alive, each with a count: the script sums them all.
    for (let i = 0; i < 9; i++) {
      await redis.set(keys.lease(`n${i}`), '1')
      await redis.hset(keys.inUse('d'), `n${i}`, 10)
    }
    const samples: number[] = []
    for (let i = 0; i < count; i++) {
      const s = performance.now()
      await runScript(redis, ADMIT, [keys.inUse('d'), keys.since, keys.lease('a')], ['a', i % 50, 1, 1000, keys.leasePrefix, 0])
      samples.push(performance.now() - s)
    }
    return summarize(samples)
  } finally {
    redis.disconnect()
  }
}

export async function benchCluster(ctx: BenchContext): Promise<BenchOutput> {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    return { result: { skipped: 'redis-server is not installed' }, summary: ['skipped: redis-server is not installed (Debian: apt-get install redis-server)'] }
  }
  const work = mkdtempSync(join(tmpdir(), 'cod-bench-cluster-'))
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(204).end())
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`
  const redis = await startRedis(work)
  const single = await startOne(mkdtempSync(join(work, 'single-')), undefined)
  const clustered = await startOne(mkdtempSync(join(work, 'cluster-')), { redis: redis.url, node_id: 'bench-1', lease_ms: 5000 })
  try {
    // A fresh Redis admits one lease after the first node joined (docs/cluster.md).
    await new Promise((r) => setTimeout(r, 5200))
    const ms = dur(ctx, 5000)
    const all = { single: [] as RoundResult[], cluster: [] as RoundResult[] }
    for (const d of [single, clustered]) {
      await round(d, callbackUrl, 500)
      await hangUpAll(d)
    }
    for (let i = 0; i < ROUNDS; i++) {
      ctx.log(`round ${i + 1}/${ROUNDS}`)
      // Each goes first in turn; every call is hung up after each round (the calls talk until then).
      for (const which of i % 2 === 0 ? (['single', 'cluster'] as const) : (['cluster', 'single'] as const)) {
        const d = which === 'single' ? single : clustered
        all[which].push(await round(d, callbackUrl, ms))
        await hangUpAll(d)
      }
    }
    const fold = (rs: RoundResult[]) => {
      const requests = rs.reduce((a, r) => a + r.requests, 0)
      const ok = rs.reduce((a, r) => a + r.ok, 0)
      const seconds = rs.reduce((a, r) => a + r.seconds, 0)
      const latency: LatencySummary = summarize(rs.flatMap((r) => r.latencies))
      return { requests, ok, requests_per_s: Number((requests / seconds).toFixed(1)), latency }
    }
    const s = fold(all.single)
    const c = fold(all.cluster)
    const admit = await admitScript(redis.url, ctx.quick ? 500 : 5000)
    const result = {
      machine: machineFacts(),
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      round_ms: ms,
      single_node: s,
      cluster_node: c,
      throughput_ratio: ratio(c.requests_per_s, s.requests_per_s),
      p50_added_ms: Number((c.latency.p50_ms - s.latency.p50_ms).toFixed(3)),
      p99_added_ms: Number((c.latency.p99_ms - s.latency.p99_ms).toFixed(3)),
      admit_script: admit,
    }
    const summary = [
      `call_user, ${CONCURRENCY} at a time, ${ROUNDS} alternating rounds of ${ms} ms (all 200: single ${s.ok}/${s.requests}, cluster ${c.ok}/${c.requests})`,
      `  single node : ${s.requests_per_s} req/s, p50 ${s.latency.p50_ms} ms, p99 ${s.latency.p99_ms} ms`,
      `  cluster node: ${c.requests_per_s} req/s, p50 ${c.latency.p50_ms} ms, p99 ${c.latency.p99_ms} ms`,
      `  cluster / single throughput ${result.throughput_ratio}; added p50 ${result.p50_added_ms} ms, p99 ${result.p99_added_ms} ms`,
      `ADMIT script alone (10 nodes alive), one at a time: p50 ${admit.p50_ms} ms, p99 ${admit.p99_ms} ms`,
    ]
    return { result, summary }
  } finally {
    await Promise.all([single.stop(), clustered.stop()])
    redis.stop()
    await new Promise<void>((r) => receiver.close(() => r()))
    rmSync(work, { recursive: true, force: true })
  }
}

// Run on its own: node --import tsx bench/cluster.ts [--quick]
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const quick = process.argv.includes('--quick')
  const out = await benchCluster({ quick, profileDir: undefined, log: (l) => process.stderr.write(`  . ${l}\n`) })
  for (const line of out.summary) process.stdout.write(`${line}\n`)
  if (!quick) writeFileSync(join(ROOT, 'bench/results/cluster.json'), `${JSON.stringify(out.result, null, 2)}\n`)
  process.exit(0)
}
