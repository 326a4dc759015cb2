/**
 * Callbacks: deliveries/s through the daemon's CallbackDispatcher (per-domain queue at the
 * default concurrency_per_domain of 8, HMAC signature, one log line per delivery) to a local
 * receiver, beside a bare fetch() loop with the same concurrency, body size and headers to the
 * same receiver. Both run in one worker process, one after the other; the receiver in another.
 */
import { startWorker } from './lib/procs.js'
import { ratio, round } from './lib/stats.js'
import type { BenchContext, BenchOutput } from './context.js'

interface Run {
  readonly ms: number
  readonly cpu_user_ms: number
  readonly cpu_system_ms: number
  readonly delivered: number
  readonly failed: number
}

const CONCURRENCY = 8

export async function benchCallbacks(ctx: BenchContext): Promise<BenchOutput> {
  const n = ctx.quick ? 1000 : 5000
  const receiver = await startWorker('receiver')
  const worker = await startWorker('dispatcher', {
    ...(ctx.profileDir !== undefined ? { profile: { dir: ctx.profileDir, name: 'callbacks-dispatcher' } } : {}),
  })
  const url = String(receiver.info.url)
  try {
    // Warm-up of both paths (JIT, connections), not counted.
    await worker.call('dispatch', { url, n: Math.min(1000, n), concurrency: CONCURRENCY })
    await worker.call('bare', { url, n: Math.min(1000, n), concurrency: CONCURRENCY })
    // Two rounds, alternating, best of each kept: the machine's other work and the order of runs move single figures.
    const dispatcherRuns: Run[] = []
    const bareRuns: Run[] = []
    for (let round = 1; round <= 2; round++) {
      ctx.log(`callbacks: round ${round}: ${n} deliveries through CallbackDispatcher, then by a bare fetch loop, concurrency ${CONCURRENCY}`)
      dispatcherRuns.push(await worker.call<Run>('dispatch', { url, n, concurrency: CONCURRENCY }))
      bareRuns.push(await worker.call<Run>('bare', { url, n, concurrency: CONCURRENCY }))
    }
    const best = (runs: Run[]): Run => runs.reduce((a, b) => (b.delivered / b.ms > a.delivered / a.ms ? b : a))
    const dispatcher = best(dispatcherRuns)
    const bare = best(bareRuns)
    ctx.log(`callbacks: ${n} deliveries through CallbackDispatcher over 4 domains (4 x ${CONCURRENCY} in flight)`)
    const spread = await worker.call<Run>('dispatch', { url, n, concurrency: CONCURRENCY, domains: 4 })
    const fig = (r: Run) => ({
      ...r,
      ms: round(r.ms, 1),
      deliveries_per_s: Math.round((r.delivered / r.ms) * 1000),
      cpu_us_per_delivery: round(((r.cpu_user_ms + r.cpu_system_ms) * 1000) / r.delivered, 1),
    })
    const d = fig(dispatcher)
    const b = fig(bare)
    const s = fig(spread)
    const result = {
      what: 'POST of a result body to a local receiver answering 204, until all are accepted',
      deliveries: n,
      concurrency: CONCURRENCY,
      note: 'best of two alternating rounds for the one-domain dispatcher and the bare loop',
      dispatcher_one_domain: d,
      dispatcher_four_domains: s,
      baseline_bare_fetch: b,
      all_rounds: { dispatcher: dispatcherRuns.map(fig), bare: bareRuns.map(fig) },
      ratios: {
        deliveries_per_s_vs_bare: ratio(d.deliveries_per_s, b.deliveries_per_s),
        cpu_per_delivery_vs_bare: ratio(d.cpu_us_per_delivery, b.cpu_us_per_delivery),
      },
    }
    return {
      result,
      summary: [
        `dispatcher  ${d.deliveries_per_s} deliveries/s, ${d.cpu_us_per_delivery} us CPU each (failed ${d.failed})`,
        `bare fetch  ${b.deliveries_per_s} deliveries/s, ${b.cpu_us_per_delivery} us CPU each   -> dispatcher at ${result.ratios.deliveries_per_s_vs_bare}x its rate`,
        `4 domains   ${s.deliveries_per_s} deliveries/s (${4 * CONCURRENCY} in flight)`,
      ],
      ...(ctx.profileDir !== undefined ? { profiles: { dispatcher: 'callbacks-dispatcher' } } : {}),
    }
  } finally {
    await worker.stop()
    await receiver.stop()
  }
}
