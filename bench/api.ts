/**
 * API path: `call_user` requests/s and latency at fixed concurrency against the simulator,
 * beside (a) a bare Node HTTP server answering the same JSON, (b) a bare esl-lite bgapi
 * round trip (`sofia_contact`, the first of call_user's two ESL exchanges) to the same simulator,
 * and (c) bare esl-lite receiving the same events as the daemon, in the same window: subscribed
 * and filtered as the daemon is (bench/workers/esl-baseline.ts, the scale and realfs baseline),
 * it is handed every channel event of the calls and every BACKGROUND_JOB (FreeSWITCH sends a
 * BACKGROUND_JOB to every connection subscribed to it, and so does the simulator). Its CPU per
 * call is the floor under the daemon's event work with the project's ESL library, which the
 * daemon's own figure can be read against (docs/bench.md).
 *
 * The calls are short: every user has one terminal that answers at once and hangs up 0.1 s
 * later; the answered leg runs the daemon's dialplan (xml_curl) and is bridged to a PSTN number.
 * So the daemon also serves the dialplan fetches and follows the calls' events during the run,
 * as it would in production. No callback_url (callbacks are measured on their own).
 */
import { randomUUID } from 'node:crypto'
import { FreeSwitchClient } from 'esl-lite'
import { pino } from 'pino'
import { AUTH, DOMAIN, ESL_PASSWORD } from './lib/config.js'
import { cpuWindow, perRequest, withCpu } from './lib/cpu.js'
import { runLoad, type LoadResult } from './lib/load.js'
import { startWorker, type Worker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio, summarize } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const USERS = 200
const CONCURRENCY = 32

const body = (i: number) => JSON.stringify({ user_name: `u${i % USERS}`, destination: '0311112222' })

/**
 * Warm-up before every measured window (the daemon's and the baselines'): 30 s. With 2 s, V8
 * was still compiling the daemon's code (about a thousand functions optimized in a run) inside
 * the window: its compiler threads were 15 % of the daemon's CPU there (perf, 2026-11-24), 5 %
 * after a 10 s warm-up, and --trace-opt still showed 20 to 30 functions optimized per second
 * from 10 to 18 s. After 30 s V8's threads (compiler and GC helpers) were 3 % of the daemon's
 * CPU (/proc/<pid>/task, 2026-11-25) against 11.5 % after 10 s. A daemon runs for days: the
 * window should see it warm. The whole-run figures, warm-up included, are kept beside.
 */
const WARMUP_MS = 30000

export async function benchApi(ctx: BenchContext): Promise<BenchOutput> {
  const warmupMs = dur(ctx, WARMUP_MS)
  const durationMs = dur(ctx, 8000)
  const stack = await startStack({
    users: USERS,
    channelLimit: 100000,
    terminal: { answer_after: 0, hangup_after: 0.1 },
    pstn: { answer_after: 0 },
    ...(ctx.profileDir !== undefined ? { profile: { dir: ctx.profileDir, name: 'api' } } : {}),
  })
  let daemon: LoadResult
  let bare: LoadResult
  let esl: { requests_per_s: number; latency: ReturnType<typeof summarize>; errors: number; completed_total: number }
  let live = 0
  let floorEvents: { readonly total: number; readonly byName: Record<string, number> }
  let cpu: Record<string, number>
  let windowCpu: Record<string, number>
  let eslCpu: Record<string, number>
  let bareCpu: Record<string, number>
  let bareWindowCpu: Record<string, number>
  let eslFloor: Worker | undefined
  try {
    eslFloor = await startWorker('esl-baseline', { args: { port: stack.eslPort, password: ESL_PASSWORD } })
    const floor = eslFloor
    ctx.log(`api: call_user at concurrency ${CONCURRENCY} for ${(warmupMs + durationMs) / 1000} s, with (c) bare esl-lite on the same events`)
    const window = cpuWindow({ daemon: stack.daemon, simulator: stack.sim, eslFloor: floor })
    // (c)'s events are counted from the window's opening.
    const countEdge = async (e: 'open' | 'close') => {
      await window.edge(e)
      if (e === 'open') await floor.call('resetEvents')
    }
    ;({ value: daemon, cpu_ms: cpu } = await withCpu({ daemon: stack.daemon, simulator: stack.sim }, () => runLoad({
      url: `${stack.baseUrl}/api/call_user`,
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body,
      concurrency: CONCURRENCY,
      warmupMs,
      durationMs,
      ok: (status) => status === 200,
      atWindow: countEdge,
    })))
    windowCpu = window.cpu_ms()
    floorEvents = await floor.call<{ total: number; byName: Record<string, number> }>('events')
    live = await stack.sim.call<number>('live')
    // Let the last calls end before the next measurement.
    await new Promise((r) => setTimeout(r, 1000))

    ctx.log('api: baseline (b) bare esl-lite bgapi round trips to the same simulator')
    ;({ value: esl, cpu_ms: eslCpu } = await withCpu({ simulator: stack.sim }, () => eslRoundTrips(stack.eslPort, warmupMs, durationMs)))
  } finally {
    await eslFloor?.stop()
    await stack.stop()
  }

  ctx.log('api: baseline (a) bare Node HTTP server, same JSON reply')
  const reply = JSON.stringify({ result_code: 0, uuids: [randomUUID()] })
  const server = await startWorker('http-baseline', { args: { payload: reply, contentType: 'application/json; charset=utf-8' } })
  try {
    const window = cpuWindow({ server })
    ;({ value: bare, cpu_ms: bareCpu } = await withCpu({ server }, () =>
      runLoad({
        url: `${String(server.info.url)}/api/call_user`,
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body,
        concurrency: CONCURRENCY,
        warmupMs,
        durationMs,
        ok: (status) => status === 200,
        atWindow: window.edge,
      }),
    ))
    bareWindowCpu = window.cpu_ms()
  } finally {
    await server.stop()
  }

  // CPU per call in the measured window (after the warm-up, as the latency figures): a running
  // daemon's cost. Until 2026-11-24 the figure was taken over the whole run, warm-up included
  // (V8 compiling the daemon's code and the first connections): kept as `..._whole_run`.
  const daemonCpu = perRequest(windowCpu.daemon, daemon.completed_in_window)
  const bareCpuPer = perRequest(bareWindowCpu.server, bare.completed_in_window)
  const floorCpuPer = perRequest(windowCpu.eslFloor, daemon.completed_in_window)
  const result = {
    what: 'POST /api/call_user (one terminal per user, answered at once, bridged to a PSTN number, hung up after 0.1 s), closed loop',
    concurrency: CONCURRENCY,
    users: USERS,
    daemon: {
      ...daemon,
      // Everything the daemon does for one request and the call it starts: API, ESL, ~25 events, the dialplan fetch.
      daemon_cpu_ms_per_call: daemonCpu,
      simulator_cpu_ms_per_call: perRequest(windowCpu.simulator, daemon.completed_in_window),
      daemon_cpu_ms_per_call_whole_run: perRequest(cpu.daemon, daemon.completed_total),
    },
    simulator_live_channels_at_end: live,
    baseline_bare_http: { ...bare, server_cpu_ms_per_request: bareCpuPer, server_cpu_ms_per_request_whole_run: perRequest(bareCpu.server, bare.completed_total) },
    baseline_esl_lite_same_events: {
      what: 'bare esl-lite subscribed and filtered as the daemon, connected to the same simulator during the measured window (bench/workers/esl-baseline.ts)',
      cpu_ms_per_call: floorCpuPer,
      // The events counted in the window, per call_user completed in it (calls straddle the edges).
      events_per_call: Number((floorEvents.total / daemon.completed_in_window).toFixed(1)),
      events_by_name_per_call: Object.fromEntries(Object.entries(floorEvents.byName).map(([k, v]) => [k, Number((v / daemon.completed_in_window).toFixed(2))])),
    },
    baseline_esl_bgapi_round_trip: {
      command: 'bgapi sofia_contact */u<i>@bench.test',
      concurrency: CONCURRENCY,
      ...esl,
      simulator_cpu_ms_per_round_trip: perRequest(eslCpu.simulator, esl.completed_total),
    },
    ratios: {
      daemon_cpu_per_call_vs_bare_http_per_request: ratio(daemonCpu, bareCpuPer),
      daemon_cpu_per_call_vs_esl_lite_same_events: ratio(daemonCpu, floorCpuPer),
      daemon_rps_vs_bare_http: ratio(daemon.requests_per_s, bare.requests_per_s),
      daemon_p50_vs_bare_http: ratio(daemon.latency.p50_ms, bare.latency.p50_ms),
      daemon_p99_vs_bare_http: ratio(daemon.latency.p99_ms, bare.latency.p99_ms),
      daemon_rps_vs_esl_round_trip: ratio(daemon.requests_per_s, esl.requests_per_s),
      daemon_p50_vs_esl_round_trip: ratio(daemon.latency.p50_ms, esl.latency.p50_ms),
    },
  }
  const errorLines = daemon.errors > 0 ? [`  errors: ${JSON.stringify(daemon.statuses)}; e.g. ${daemon.error_samples.slice(0, 2).join(' | ')}`] : []
  return {
    result,
    summary: [
      `call_user       ${daemon.requests_per_s} req/s  p50 ${daemon.latency.p50_ms} ms  p99 ${daemon.latency.p99_ms} ms  (errors ${daemon.errors}); CPU per call: daemon ${daemonCpu} ms (whole run, warm-up included: ${result.daemon.daemon_cpu_ms_per_call_whole_run} ms), simulator ${result.daemon.simulator_cpu_ms_per_call} ms`,
      ...errorLines,
      `esl-lite events ${floorCpuPer} ms CPU per call to receive the call's ${result.baseline_esl_lite_same_events.events_per_call} events (bare esl-lite, same window)  -> daemon at ${result.ratios.daemon_cpu_per_call_vs_esl_lite_same_events}x`,
      `bare HTTP       ${bare.requests_per_s} req/s  p50 ${bare.latency.p50_ms} ms  p99 ${bare.latency.p99_ms} ms  (${bareCpuPer} ms CPU each)  -> daemon at ${result.ratios.daemon_rps_vs_bare_http}x its rate`,
      `esl-lite bgapi  ${esl.requests_per_s} round trips/s  p50 ${esl.latency.p50_ms} ms  p99 ${esl.latency.p99_ms} ms   -> daemon at ${result.ratios.daemon_rps_vs_esl_round_trip}x its rate`,
    ],
    ...(ctx.profileDir !== undefined ? { profiles: { daemon: 'api-daemon', simulator: 'api-sim' } } : {}),
  }
}

/** `CONCURRENCY` loops of bgapi round trips (command/reply, then BACKGROUND_JOB) over one esl-lite socket. */
async function eslRoundTrips(port: number, warmupMs: number, durationMs: number) {
  const client = new FreeSwitchClient({ host: '127.0.0.1', port, password: ESL_PASSWORD, logger: pino({ level: 'silent' }) })
  try {
    for (let i = 0; ; i++) {
      const r = await client.bgapi('status', 2000)
      if (!(r instanceof Error)) break
      if (i > 100) throw new Error('esl-lite could not reach the simulator')
      await new Promise((res) => setTimeout(res, 50))
    }
    const samples: number[] = []
    let errors = 0
    let n = 0
    let completed = 0
    const t0 = performance.now()
    const from = t0 + warmupMs
    const deadline = from + durationMs
    const loop = async () => {
      for (;;) {
        const start = performance.now()
        if (start >= deadline) return
        const r = await client.bgapi(`sofia_contact */u${n++ % USERS}@${DOMAIN}`, 5000)
        const end = performance.now()
        completed++
        if (start < from || end > deadline) continue
        if (r instanceof Error || !String(r.body.response).startsWith('sofia/')) errors++
        else samples.push(end - start)
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, loop))
    return { requests_per_s: Number((samples.length / (durationMs / 1000)).toFixed(1)), latency: summarize(samples), errors, completed_total: completed }
  } finally {
    client.end()
  }
}
