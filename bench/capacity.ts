/**
 * Capacity (issue 15): the highest `call_user` rate the daemon sustains with p99 ≤ 100 ms, on
 * the simulator, and what gives first. The daemon is one Node process: one core is all it can
 * use, so its CPU share (process CPU / wall time) near 1 means it is the limit. Requests are sent
 * open loop (at a fixed rate, whatever the replies do, as callers would) in steps of rising rate;
 * each step reports latency, the CPU share of the daemon and of the simulator, the daemon's
 * event-loop delay (p99, max) and its pending background jobs (the ESL queue). The stack and the
 * calls are those of the api benchmark (bench/api.ts).
 *
 * The simulator runs on the same 2 shared cores and costs about as much per call as the daemon:
 * past ~half the machine the two compete, which the CPU shares show.
 */
import { Agent, request } from 'node:http'
import { AUTH } from './lib/config.js'
import { startStack } from './lib/stack.js'
import { summarize } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const USERS = 200
const P99_LIMIT_MS = 100
const RATES = [20, 40, 60, 80, 100, 130, 160, 200, 250, 300]

interface Step {
  rate: number
  sent: number
  ok: number
  errors: number
  p50_ms: number
  p99_ms: number
  daemon_cpu_share: number
  simulator_cpu_share: number
  loop_delay_p99_ms: number
  loop_delay_max_ms: number
  pending_jobs_at_end: number | undefined
}

const cpuMs = (u: { user: number; system: number }) => (u.user + u.system) / 1000

export async function benchCapacity(ctx: BenchContext): Promise<BenchOutput> {
  const stepMs = dur(ctx, 5000)
  const stack = await startStack({ users: USERS, channelLimit: 100000, terminal: { answer_after: 0, hangup_after: 0.1 }, pstn: { answer_after: 0 } })
  const agent = new Agent({ keepAlive: true, maxSockets: 512 })
  const url = new URL(`${stack.baseUrl}/api/call_user`)
  let n = 0
  const once = (): Promise<{ status: number; ms: number }> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ user_name: `u${n++ % USERS}`, destination: '0311112222' })
      const t0 = performance.now()
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: AUTH, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }))
        },
      )
      req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }))
      req.end(body)
    })
  const steps: Step[] = []
  try {
    for (const rate of RATES) {
      await new Promise((r) => setTimeout(r, 1000)) // the previous step's calls end
      await stack.daemon.call('load') // resets the loop-delay histogram
      const [d0, s0] = [await stack.daemon.call<NodeJS.CpuUsage>('cpu'), await stack.sim.call<NodeJS.CpuUsage>('cpu')]
      const started = performance.now()
      const replies: Array<Promise<{ status: number; ms: number }>> = []
      const count = Math.round((rate * stepMs) / 1000)
      for (let i = 0; i < count; i++) {
        const due = started + (i * 1000) / rate
        const wait = due - performance.now()
        if (wait > 1) await new Promise((r) => setTimeout(r, wait))
        replies.push(once())
      }
      const done = await Promise.all(replies)
      const wall = performance.now() - started
      const [d1, s1] = [await stack.daemon.call<NodeJS.CpuUsage>('cpu'), await stack.sim.call<NodeJS.CpuUsage>('cpu')]
      const load = await stack.daemon.call<{ loop_delay_p99_ms: number; loop_delay_max_ms: number; pending_jobs: number | undefined }>('load')
      const okMs = done.filter((r) => r.status === 200).map((r) => r.ms)
      const lat = summarize(okMs)
      const step: Step = {
        rate,
        sent: count,
        ok: okMs.length,
        errors: count - okMs.length,
        p50_ms: lat.p50_ms,
        p99_ms: lat.p99_ms,
        daemon_cpu_share: Number(((cpuMs(d1) - cpuMs(d0)) / wall).toFixed(2)),
        simulator_cpu_share: Number(((cpuMs(s1) - cpuMs(s0)) / wall).toFixed(2)),
        loop_delay_p99_ms: load.loop_delay_p99_ms,
        loop_delay_max_ms: load.loop_delay_max_ms,
        pending_jobs_at_end: load.pending_jobs,
      }
      steps.push(step)
      ctx.log(`capacity: ${JSON.stringify(step)}`)
      if (step.errors > 0 || step.p99_ms > 4 * P99_LIMIT_MS) break
    }
  } finally {
    agent.destroy()
    await stack.stop()
  }
  const within = steps.filter((s) => s.errors === 0 && s.p99_ms <= P99_LIMIT_MS)
  const best = within.at(-1)
  const broke = steps.find((s) => s.errors > 0 || s.p99_ms > P99_LIMIT_MS)
  const why =
    broke === undefined
      ? 'not reached'
      : broke.daemon_cpu_share >= 0.85
        ? 'daemon CPU (one core busy)'
        : broke.daemon_cpu_share + broke.simulator_cpu_share >= 1.7
          ? 'the machine (daemon and simulator share 2 cores)'
          : broke.loop_delay_p99_ms > P99_LIMIT_MS / 2
            ? 'event-loop delay'
            : 'latency (queueing)'
  const result = { what: 'call_user open loop in steps of rising rate on the simulator (api benchmark calls)', p99_limit_ms: P99_LIMIT_MS, step_s: stepMs / 1000, steps, capacity_call_user_per_s: best?.rate ?? 0, breaks_at: broke?.rate, breaks_on: why }
  return {
    result,
    summary: [
      `capacity        ${result.capacity_call_user_per_s} call_user/s with p99 <= ${P99_LIMIT_MS} ms (daemon CPU share ${best?.daemon_cpu_share ?? '-'}, simulator ${best?.simulator_cpu_share ?? '-'})`,
      `breaks at       ${broke === undefined ? 'no step' : `${broke.rate}/s: p99 ${broke.p99_ms} ms, errors ${broke.errors}, daemon CPU ${broke.daemon_cpu_share}, simulator ${broke.simulator_cpu_share}, loop delay p99 ${broke.loop_delay_p99_ms} ms -> ${why}`}`,
    ],
  }
}
