/**
 * What the result journal costs (issue 11: at most 10 %): `call_user` requests/s and latency with
 * the journal (the default: the accepted request fsynced before each 200, the result before its
 * first delivery attempt, the ack after it) beside the same load with `journal.enabled: false`,
 * in the same run on the same machine. Every request carries a callback_url to a local receiver
 * answering 204, so all four records of a call are written. Runs alternate (on, off, on, off)
 * and the best of each kind is kept: the order of runs and the machine's other work move single
 * figures more than the difference measured here.
 *
 * Then the journal alone (bench/workers/journal.ts): accepted records appended by 32 loops that
 * each wait for durability, as requests do. Its CPU per record, times the four records of a call,
 * beside the daemon's CPU per call, is the cost that a loaded machine does not blur.
 */
import { AUTH } from './lib/config.js'
import { withCpu, perRequest } from './lib/cpu.js'
import { runLoad, type LoadResult } from './lib/load.js'
import { startWorker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio, round } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const USERS = 200
const CONCURRENCY = 32

interface AloneRun {
  readonly ms: number
  readonly cpu_user_ms: number
  readonly cpu_system_ms: number
  readonly appended: number
  readonly commits: number
}

/** Records a call with a callback writes: accepted, result, acked (and one attempted per retry). */
const RECORDS_PER_CALL = 3

interface JournalRun {
  readonly journal: boolean
  readonly load: LoadResult
  readonly daemon_cpu_ms_per_call: number
}

export async function benchJournal(ctx: BenchContext): Promise<BenchOutput> {
  const warmupMs = dur(ctx, 2000)
  const durationMs = dur(ctx, 6000)
  const receiver = await startWorker('receiver')
  const callbackUrl = `${String(receiver.info.url)}`
  const body = (i: number) => JSON.stringify({ user_name: `u${i % USERS}`, destination: '0311112222', callback_url: callbackUrl })
  const runs: JournalRun[] = []
  try {
    for (const journal of ctx.quick ? [true, false] : [true, false, true, false]) {
      ctx.log(`journal: call_user at concurrency ${CONCURRENCY} with callbacks, journal ${journal ? 'on (fsync, group commit)' : 'off'}`)
      const stack = await startStack({
        users: USERS,
        channelLimit: 100000,
        terminal: { answer_after: 0, hangup_after: 0.1 },
        pstn: { answer_after: 0 },
        journal,
      })
      try {
        const { value: load, cpu_ms } = await withCpu({ daemon: stack.daemon }, () =>
          runLoad({
            url: `${stack.baseUrl}/api/call_user`,
            headers: { 'content-type': 'application/json', authorization: AUTH },
            body,
            concurrency: CONCURRENCY,
            warmupMs,
            durationMs,
            ok: (status) => status === 200,
          }),
        )
        runs.push({ journal, load, daemon_cpu_ms_per_call: perRequest(cpu_ms.daemon, load.completed_total) })
      } finally {
        await stack.stop()
      }
    }
  } finally {
    await receiver.stop()
  }
  const n = ctx.quick ? 2000 : 20000
  ctx.log(`journal: alone, ${n} records appended by ${CONCURRENCY} loops, each waiting for durability`)
  const worker = await startWorker('journal')
  let alone: AloneRun
  try {
    alone = await worker.call<AloneRun>('appends', { n, concurrency: CONCURRENCY })
  } finally {
    await worker.stop()
  }
  const cpuUsPerRecord = round(((alone.cpu_user_ms + alone.cpu_system_ms) * 1000) / alone.appended, 1)
  const best = (on: boolean): JournalRun => {
    const of = runs.filter((r) => r.journal === on)
    return of.reduce((a, b) => (b.load.requests_per_s > a.load.requests_per_s ? b : a))
  }
  const on = best(true)
  const off = best(false)
  const costPct = round((1 - on.load.requests_per_s / off.load.requests_per_s) * 100, 1)
  const fig = (r: JournalRun) => ({
    requests_per_s: r.load.requests_per_s,
    latency: r.load.latency,
    errors: r.load.errors,
    daemon_cpu_ms_per_call: r.daemon_cpu_ms_per_call,
  })
  const result = {
    what: 'POST /api/call_user with callback_url (one terminal per user answering at once, bridged to a PSTN number, hung up after 0.1 s), closed loop; journal on vs journal.enabled: false',
    concurrency: CONCURRENCY,
    note: 'best of two alternating runs of each kind',
    journal_on: fig(on),
    journal_off: fig(off),
    all_runs: runs.map((r) => ({ journal: r.journal, ...fig(r) })),
    ratios: {
      rps_on_vs_off: ratio(on.load.requests_per_s, off.load.requests_per_s),
      p50_on_vs_off: ratio(on.load.latency.p50_ms, off.load.latency.p50_ms),
      p99_on_vs_off: ratio(on.load.latency.p99_ms, off.load.latency.p99_ms),
    },
    throughput_cost_pct: costPct,
    limit_pct: 10,
    journal_alone: {
      records: alone.appended,
      concurrency: CONCURRENCY,
      records_per_s: Math.round((alone.appended / alone.ms) * 1000),
      fsyncs: alone.commits,
      records_per_fsync: round(alone.appended / Math.max(1, alone.commits), 1),
      cpu_us_per_record: cpuUsPerRecord,
      // The journal's CPU for one call's records, as a share of the daemon's CPU per call without it.
      cpu_share_of_call_pct: round(((cpuUsPerRecord * RECORDS_PER_CALL) / 1000 / off.daemon_cpu_ms_per_call) * 100, 2),
    },
  }
  return {
    result,
    summary: [
      `journal on      ${on.load.requests_per_s} req/s  p50 ${on.load.latency.p50_ms} ms  p99 ${on.load.latency.p99_ms} ms  (errors ${on.load.errors}); CPU per call ${on.daemon_cpu_ms_per_call} ms`,
      `journal off     ${off.load.requests_per_s} req/s  p50 ${off.load.latency.p50_ms} ms  p99 ${off.load.latency.p99_ms} ms  (errors ${off.load.errors}); CPU per call ${off.daemon_cpu_ms_per_call} ms`,
      `journal cost    ${costPct} % of call_user throughput (limit 10 %)`,
      `journal alone   ${result.journal_alone.records_per_s} records/s at ${CONCURRENCY} waiting loops, ${result.journal_alone.records_per_fsync} records per fsync, ${cpuUsPerRecord} µs CPU per record: ${result.journal_alone.cpu_share_of_call_pct} % of a call's CPU for its ${RECORDS_PER_CALL} records`,
    ],
  }
}
