/**
 * What the result journal costs (issue 11: at most 10 %): `call_user` requests/s and latency with
 * the journal (the default: the accepted request fsynced before each 200, the result before its
 * first delivery attempt, the ack after it) beside the same load with `journal.enabled: false`,
 * in the same run on the same machine. Every request carries a callback_url to a local receiver
 * answering 204, so all four records of a call are written. Runs alternate (on, off, on, off)
 * and the best of each kind is kept: the order of runs and the machine's other work move single
 * figures more than the difference measured here.
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
  }
  return {
    result,
    summary: [
      `journal on      ${on.load.requests_per_s} req/s  p50 ${on.load.latency.p50_ms} ms  p99 ${on.load.latency.p99_ms} ms  (errors ${on.load.errors}); CPU per call ${on.daemon_cpu_ms_per_call} ms`,
      `journal off     ${off.load.requests_per_s} req/s  p50 ${off.load.latency.p50_ms} ms  p99 ${off.load.latency.p99_ms} ms  (errors ${off.load.errors}); CPU per call ${off.daemon_cpu_ms_per_call} ms`,
      `journal cost    ${costPct} % of call_user throughput (limit 10 %)`,
    ],
  }
}
