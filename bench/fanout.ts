/**
 * CTI fan-out (issue 32): 1, 100 and 1,000 ticket subscribers (full_events, read_only: the live
 * calls page's monitor ticket) on one domain while calls run at a fixed rate. Figures: the
 * daemon's CPU per event per subscriber (its CPU in a window of calls with N subscribers, less
 * its CPU in the same window of calls with none, over the frames the subscribers received) and
 * its memory per idle subscriber (heap and RSS after full collections, with N connected and no
 * call, less with none, over N).
 *
 * Baseline, same run: a bare `ws` server (bench/workers/ws-broadcast.ts) broadcasting the frames
 * a subscriber received from the daemon, at the same rate, to the same number of clients: its CPU
 * per frame per client (less its CPU pacing the same frames to no client) and its memory per idle
 * client.
 *
 * The subscribers are WebSocket clients in a process of their own (bench/workers/ws-clients.ts),
 * each with its own ticket (`gen_ws_ticket`), app_name `fan<i>`.
 */
import { AUTH } from './lib/config.js'
import { startWorker, type Worker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio, round } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'
import { Agent, request } from 'node:http'

const USERS = 200
/** call_user per second: each call is 14 channel changes to each subscriber (two legs); 1,000 subscribers then get 28,000 frames a second, more than half a core of the daemon. */
const RATE = 2
const COUNTS = [1, 100, 1000]
/** After a window's last request, its calls end (hung up 0.1 s after answering) and their events arrive. */
const TAIL_MS = 1500

interface Mem {
  readonly heapUsed: number
  readonly rss: number
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000

/** call_user at `rate`/s for `ms`, open loop; resolves when every reply arrived. */
async function calls(baseUrl: string, rate: number, ms: number): Promise<{ sent: number; ok: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const url = new URL(`${baseUrl}/api/call_user`)
  const t0 = performance.now()
  const replies: Array<Promise<number>> = []
  for (let i = 0; ; i++) {
    const due = t0 + (i * 1000) / rate
    if (due - t0 >= ms) break
    const wait = due - performance.now()
    if (wait > 1) await new Promise((r) => setTimeout(r, wait))
    const body = JSON.stringify({ user_name: `u${i % USERS}`, destination: '0311112222' })
    replies.push(
      new Promise((resolve) => {
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: AUTH, 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('error', () => resolve(0))
        req.end(body)
      }),
    )
  }
  const statuses = await Promise.all(replies)
  agent.destroy()
  return { sent: statuses.length, ok: statuses.filter((s) => s === 200).length }
}

/**
 * Waits until the clients received everything sent (their count unchanged for two seconds):
 * with 1,000 clients in one process the last frames arrive seconds after they were sent, and the
 * sender's CPU for them (the writes of data ws had to buffer) belongs in its window.
 */
interface Counts {
  readonly messages: number
  readonly open: number
  readonly min: number
  readonly max: number
}

async function settled(clients: Worker): Promise<Counts> {
  let last = await clients.call<Counts>('counts')
  let still = 0
  for (let i = 0; i < 240 && still < 4; i++) {
    await new Promise((r) => setTimeout(r, 500))
    const now = await clients.call<Counts>('counts')
    still = now.messages === last.messages ? still + 1 : 0
    last = now
  }
  return last
}

/** CPU ms a worker used while `work` ran. */
async function cpuOf(w: Worker, work: () => Promise<unknown>): Promise<number> {
  const a = await w.call<NodeJS.CpuUsage>('cpu')
  await work()
  const b = await w.call<NodeJS.CpuUsage>('cpu')
  return cpuMs(b) - cpuMs(a)
}

interface Step {
  readonly subscribers: number
  readonly calls_ok: number
  readonly frames_per_subscriber: number
  /** The fewest and the most frames one subscriber received: every subscriber sees every change. */
  readonly frames_fewest_most: readonly [number, number]
  readonly daemon_cpu_ms: number
  readonly daemon_cpu_us_per_event_per_subscriber: number
  readonly daemon_heap_bytes_per_subscriber: number
  readonly daemon_rss_bytes_per_subscriber: number
  readonly subscribers_open_after: number
}

/**
 * The bare server's ways of sending (ws-broadcast.ts): `shared` is the baseline; at the largest
 * count the daemon's old and new ways of adding each client's head are measured too.
 */
const MODES = ['shared', 'fragments', 'copy'] as const

interface BareStep {
  readonly clients: number
  readonly mode: (typeof MODES)[number]
  readonly frames: number
  readonly received_per_client: number
  readonly server_cpu_ms: number
  readonly cpu_us_per_frame_per_client: number
  readonly heap_bytes_per_client: number
  readonly rss_bytes_per_client: number
}

export async function benchFanout(ctx: BenchContext): Promise<BenchOutput> {
  const warmupMs = dur(ctx, 20000)
  const windowMs = dur(ctx, 15000)
  const counts = ctx.quick ? [1, 100] : COUNTS
  const steps: Step[] = []
  const bareSteps: BareStep[] = []
  let baseCpu = NaN
  let frames: string[] = []
  let framesPerS = NaN
  let bareIdleCpu = NaN

  const stack = await startStack({ users: USERS, channelLimit: 100000, terminal: { answer_after: 0, hangup_after: 0.1 }, pstn: { answer_after: 0 } })
  let clients = await startWorker('ws-clients')
  try {
    ctx.log(`fanout: warm-up, call_user at ${RATE}/s for ${warmupMs / 1000} s`)
    await calls(stack.baseUrl, RATE, warmupMs)
    await new Promise((r) => setTimeout(r, TAIL_MS))
    const mem0 = await stack.daemon.call<Mem>('memory')
    ctx.log('fanout: the same calls with no subscriber (the daemon\'s own cost of the calls)')
    baseCpu = await cpuOf(stack.daemon, async () => {
      await calls(stack.baseUrl, RATE, windowMs)
      await new Promise((r) => setTimeout(r, TAIL_MS))
    })
    for (const n of counts) {
      ctx.log(`fanout: ${n} ticket subscribers`)
      await clients.call('cti', { baseUrl: stack.baseUrl, auth: AUTH, total: n })
      await new Promise((r) => setTimeout(r, 500))
      const mem = await stack.daemon.call<Mem>('memory')
      await clients.call('reset', { capture: n === counts[0] })
      let ok = 0
      let got: Counts = { messages: 0, open: 0, min: 0, max: 0 }
      const cpu = await cpuOf(stack.daemon, async () => {
        ok = (await calls(stack.baseUrl, RATE, windowMs)).ok
        await new Promise((r) => setTimeout(r, TAIL_MS))
        got = await settled(clients)
      })
      if (n === counts[0]) {
        frames = await clients.call<string[]>('captured')
        framesPerS = frames.length / (windowMs / 1000)
      }
      const step: Step = {
        subscribers: n,
        calls_ok: ok,
        frames_per_subscriber: round(got.messages / n, 1),
        frames_fewest_most: [got.min, got.max],
        daemon_cpu_ms: round(cpu, 1),
        daemon_cpu_us_per_event_per_subscriber: round(((cpu - baseCpu) * 1000) / Math.max(1, got.messages), 2),
        daemon_heap_bytes_per_subscriber: Math.round((mem.heapUsed - mem0.heapUsed) / n),
        daemon_rss_bytes_per_subscriber: Math.round((mem.rss - mem0.rss) / n),
        subscribers_open_after: got.open,
      }
      steps.push(step)
      ctx.log(`fanout: ${JSON.stringify(step)}`)
    }
  } finally {
    await clients.stop()
    await stack.stop()
  }

  ctx.log(`fanout: baseline, bare ws broadcasting the ${frames.length} captured frames at ${round(framesPerS, 1)}/s`)
  const server = await startWorker('ws-broadcast', { exposeGc: true })
  clients = await startWorker('ws-clients')
  try {
    await server.call('frames', { frames })
    const mem0 = await server.call<Mem>('memory')
    // Its pacing timer's own cost, with no client: subtracted as the daemon's calls are.
    bareIdleCpu = await cpuOf(server, async () => {
      await server.call<number>('broadcast', { rate: framesPerS, durationMs: windowMs })
      await new Promise((r) => setTimeout(r, 300))
    })
    for (const n of counts) {
      await clients.call('bare', { url: String(server.info.url), total: n })
      await new Promise((r) => setTimeout(r, 500))
      const mem = await server.call<Mem>('memory')
      for (const mode of n === counts.at(-1) ? MODES : ['shared' as const]) {
        await clients.call('reset', {})
        let sent = 0
        let got: Counts = { messages: 0, open: 0, min: 0, max: 0 }
        const cpu = await cpuOf(server, async () => {
          sent = await server.call<number>('broadcast', { rate: framesPerS, durationMs: windowMs, mode })
          got = await settled(clients)
        })
        const step: BareStep = {
          clients: n,
          mode,
        frames: sent,
        received_per_client: round(got.messages / n, 1),
        server_cpu_ms: round(cpu, 1),
        cpu_us_per_frame_per_client: round(((cpu - bareIdleCpu) * 1000) / Math.max(1, sent * n), 2),
        heap_bytes_per_client: Math.round((mem.heapUsed - mem0.heapUsed) / n),
        rss_bytes_per_client: Math.round((mem.rss - mem0.rss) / n),
        }
        bareSteps.push(step)
        ctx.log(`fanout: bare ${JSON.stringify(step)}`)
      }
    }
  } finally {
    await clients.stop()
    await server.stop()
  }

  const shared = bareSteps.filter((b) => b.mode === 'shared')
  const pairs = steps.map((s, i) => {
    const b = shared[i]
    return {
      subscribers: s.subscribers,
      cpu_per_event_per_subscriber_vs_bare: ratio(s.daemon_cpu_us_per_event_per_subscriber, b?.cpu_us_per_frame_per_client ?? NaN),
      heap_per_subscriber_vs_bare: ratio(s.daemon_heap_bytes_per_subscriber, b?.heap_bytes_per_client ?? NaN),
    }
  })
  const result = {
    what: `CTI ticket subscribers (full_events, read_only) on one domain while call_user runs at ${RATE}/s (one terminal per user answering at once, bridged to a PSTN number, hung up after 0.1 s), beside a bare ws server broadcasting the same frames`,
    call_rate_per_s: RATE,
    window_s: windowMs / 1000,
    daemon_cpu_ms_without_subscribers: round(baseCpu, 1),
    daemon: steps,
    baseline_bare_ws: { what: 'ws WebSocketServer, each frame a Buffer sent to every client (bench/workers/ws-broadcast.ts)', frames_per_s: round(framesPerS, 1), server_cpu_ms_without_clients: round(bareIdleCpu, 1), steps: bareSteps },
    ratios: pairs,
    targets: { cpu_per_event_per_subscriber_vs_bare: 1.5, memory_per_idle_subscriber_bytes: 20_000 },
  }
  return {
    result,
    summary: [
      ...steps.map((s, i) => {
        const b = shared[i]
        return `${String(s.subscribers).padStart(5)} subs      daemon ${s.daemon_cpu_us_per_event_per_subscriber} µs per event per subscriber (bare ws ${b?.cpu_us_per_frame_per_client ?? '-'} µs: x${pairs[i]?.cpu_per_event_per_subscriber_vs_bare ?? '-'}); memory per idle subscriber heap ${s.daemon_heap_bytes_per_subscriber} B, RSS ${s.daemon_rss_bytes_per_subscriber} B (bare ws heap ${b?.heap_bytes_per_client ?? '-'} B, RSS ${b?.rss_bytes_per_client ?? '-'} B); ${s.frames_per_subscriber} frames each, ${s.subscribers_open_after} open`
      }),
      ...bareSteps.filter((b) => b.mode !== 'shared').map((b) => `bare ws, ${b.mode.padEnd(9)} ${b.clients} clients: ${b.cpu_us_per_frame_per_client} µs per frame per client (x${ratio(b.cpu_us_per_frame_per_client, shared.at(-1)?.cpu_us_per_frame_per_client ?? NaN)} the shared Buffer)`),
    ],
  }
}
