/**
 * Start with a big journal (issue 32): after an outage of the callback receiver the journal
 * holds many pending results, and the daemon reads it at start before it serves. Journals of
 * 1,000, 10,000 and 100,000 pending results plus as many open requests (a 200 sent, no result)
 * are written by the journal itself (bench/workers/journal.ts `fill`), then the daemon starts on
 * each, its simulator already listening. Figures: the time from the daemon's process start to
 * `/healthz` 200 and to the first result acknowledged by the receiver, the time until every
 * result (the pending ones re-delivered, the open requests' recovered ones) was acknowledged,
 * the journal's size, and heap and RSS after the start. Baseline, same run: the same start on an
 * empty journal.
 *
 * Then a sustained load (call_user with callbacks, closed loop at 32) with the journal's size
 * sampled every second: compaction must keep it bounded while the bytes written keep growing.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AUTH, freePort, writeBenchConfig } from './lib/config.js'
import { runLoad } from './lib/load.js'
import { startWorker, type Worker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio, round } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const SIZES = [1000, 10_000, 100_000]
/** How long the re-delivery of everything may take before the run gives up waiting. */
const DRAIN_LIMIT_MS = 180_000

const wallMs = (): number => performance.timeOrigin + performance.now()

function folderBytes(dir: string): number {
  let n = 0
  for (const f of readdirSync(dir)) n += statSync(join(dir, f)).size
  return n
}

interface StartRun {
  readonly pending_results: number
  readonly open_requests: number
  readonly journal_bytes: number
  readonly write_s: number
  readonly to_ready_ms: number
  readonly to_healthz_ms: number
  readonly to_first_delivery_ms: number
  readonly to_all_delivered_ms: number | null
  readonly delivered: number
  readonly heap_after_start: number
  readonly rss_after_start: number
}

async function startOn(ctx: BenchContext, size: number, receiver: Worker, journalWriter: Worker): Promise<StartRun> {
  const journalDir = mkdtempSync(join(tmpdir(), 'cod-bench-restart-'))
  const eslPort = await freePort()
  const config = writeBenchConfig({ users: 10, channelLimit: 100000, eslPort, terminal: { answer_after: 0 }, pstn: { answer_after: 0 } })
  const workers: Worker[] = []
  try {
    const filled = await journalWriter.call<{ ms: number; pending_results: number; open_requests: number; segment_bytes: number }>('fill', { dir: journalDir, results: size, open: size, callbackUrl: String(receiver.info.url) })
    const bytes = folderBytes(journalDir)
    // No call is placed: the simulator's xml_curl URL is never used.
    workers.push(await startWorker('sim', { args: { configFile: config.configFile, port: eslPort, xmlCurlUrl: 'http://127.0.0.1:9/freeswitch' } }))
    await receiver.call('reset')
    const t0 = wallMs()
    const daemon = await startWorker('daemon', { args: { configFile: config.configFile, journalDir }, exposeGc: true })
    workers.push(daemon)
    const ready = wallMs() - t0
    let healthz = NaN
    for (;;) {
      const r = await fetch(`${String(daemon.info.baseUrl)}/healthz`).catch(() => undefined)
      if (r?.status === 200) {
        healthz = wallMs() - t0
        break
      }
      if (wallMs() - t0 > 60_000) throw new Error('no /healthz 200 within 60 s')
      await new Promise((res) => setTimeout(res, 5))
    }
    const mem = await daemon.call<{ heapUsed: number; rss: number }>('memory')
    const expected = filled.pending_results + filled.open_requests
    let first = NaN
    let all: number | null = null
    let accepted = 0
    for (; expected > 0; ) {
      const st = await receiver.call<{ accepted: number; first: number; last: number }>('stats')
      accepted = st.accepted
      if (st.first > 0 && Number.isNaN(first)) first = st.first - t0
      if (st.accepted >= expected) {
        all = st.last - t0
        break
      }
      if (wallMs() - t0 > DRAIN_LIMIT_MS) break
      await new Promise((res) => setTimeout(res, 50))
    }
    const run: StartRun = {
      pending_results: filled.pending_results,
      open_requests: filled.open_requests,
      journal_bytes: bytes,
      write_s: round(filled.ms / 1000, 1),
      to_ready_ms: Math.round(ready),
      to_healthz_ms: Math.round(healthz),
      to_first_delivery_ms: Math.round(first),
      to_all_delivered_ms: all === null ? null : Math.round(all),
      delivered: accepted,
      heap_after_start: mem.heapUsed,
      rss_after_start: mem.rss,
    }
    ctx.log(`restart: ${JSON.stringify(run)}`)
    return run
  } finally {
    for (const w of workers.reverse()) await w.stop()
    config.remove()
    rmSync(journalDir, { recursive: true, force: true })
  }
}

interface SizeSample {
  readonly s: number
  readonly bytes: number
}

export async function benchRestart(ctx: BenchContext): Promise<BenchOutput> {
  const sizes = ctx.quick ? [1000] : SIZES
  const receiver = await startWorker('receiver')
  const journalWriter = await startWorker('journal')
  const runs: StartRun[] = []
  let baseline: StartRun
  let sustained: { seconds: number; calls: number; written_bytes: number; max_bytes: number; last_bytes: number; samples: SizeSample[] }
  try {
    ctx.log('restart: baseline, an empty journal')
    baseline = await startOn(ctx, 0, receiver, journalWriter)
    for (const size of sizes) {
      ctx.log(`restart: ${size} pending results and ${size} open requests`)
      runs.push(await startOn(ctx, size, receiver, journalWriter))
    }

    const seconds = dur(ctx, 90_000) / 1000
    ctx.log(`restart: sustained load with callbacks for ${seconds} s, the journal's size sampled every second`)
    const stack = await startStack({ users: 200, channelLimit: 100000, terminal: { answer_after: 0, hangup_after: 0.1 }, pstn: { answer_after: 0 } })
    const journalDir = join(stack.config.dir, 'journal')
    const samples: SizeSample[] = []
    let written = 0
    let prev = 0
    const t0 = performance.now()
    const sampler = setInterval(() => {
      const bytes = folderBytes(journalDir)
      // Growth between samples is what was written; a drop is a compaction (its new segment's bytes count too).
      written += bytes >= prev ? bytes - prev : bytes
      prev = bytes
      samples.push({ s: round((performance.now() - t0) / 1000, 1), bytes })
    }, 1000)
    try {
      const load = await runLoad({
        url: `${stack.baseUrl}/api/call_user`,
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: (i) => JSON.stringify({ user_name: `u${i % 200}`, destination: '0311112222', callback_url: String(receiver.info.url) }),
        concurrency: 32,
        warmupMs: 0,
        durationMs: seconds * 1000,
        ok: (status) => status === 200,
      })
      clearInterval(sampler)
      sustained = { seconds, calls: load.completed_total, written_bytes: written, max_bytes: Math.max(...samples.map((s) => s.bytes)), last_bytes: samples.at(-1)?.bytes ?? 0, samples }
    } finally {
      clearInterval(sampler)
      await stack.stop()
    }
  } finally {
    await journalWriter.stop()
    await receiver.stop()
  }

  const over = (r: StartRun) => ({
    healthz_ms_over_empty: r.to_healthz_ms - baseline.to_healthz_ms,
    healthz_vs_empty: ratio(r.to_healthz_ms, baseline.to_healthz_ms),
    heap_bytes_per_pending: round((r.heap_after_start - baseline.heap_after_start) / (r.pending_results + r.open_requests), 1),
  })
  const result = {
    what: 'the daemon started on a journal of N pending results and N open requests (written by the journal), its simulator listening; a callback receiver answering 204',
    baseline_empty_journal: baseline,
    runs: runs.map((r) => ({ ...r, ...over(r) })),
    sustained_load: { ...sustained, written_vs_max_on_disk: ratio(sustained.written_bytes, sustained.max_bytes) },
    targets: { healthz_ms_at_100000: 2000 },
  }
  const mb = (b: number) => round(b / 1e6, 2)
  return {
    result,
    summary: [
      `empty journal   /healthz 200 after ${baseline.to_healthz_ms} ms (process start included), heap ${mb(baseline.heap_after_start)} MB`,
      ...runs.map(
        (r) =>
          `${String(r.pending_results).padStart(6)} + ${String(r.open_requests).padStart(6)}  journal ${mb(r.journal_bytes)} MB: /healthz 200 after ${r.to_healthz_ms} ms (+${over(r).healthz_ms_over_empty} ms over empty), first delivery ${r.to_first_delivery_ms} ms, all ${r.delivered} delivered ${r.to_all_delivered_ms ?? 'not'} ms; heap ${mb(r.heap_after_start)} MB, RSS ${mb(r.rss_after_start)} MB`,
      ),
      `sustained       ${sustained.calls} calls in ${sustained.seconds} s: ${mb(sustained.written_bytes)} MB written, journal at most ${mb(sustained.max_bytes)} MB on disk, ${mb(sustained.last_bytes)} MB at the end`,
    ],
  }
}
