/**
 * Scale: 10,000 concurrent live calls tracked by the daemon.
 *
 * A driver (an esl-lite client in this process) makes the simulator originate 10,000 answered,
 * parked PSTN legs stamped like the daemon's own (cod_domain, cod_request_id, cod_role), so the
 * daemon, connected to the same simulator, sees every event and tracks every channel. Measured
 * in the daemon's process (the simulator runs in another one, so its 10,000 sessions are not
 * counted): heap and resident memory after full GCs before and with the calls up, hence bytes
 * per live call; then the events of all calls hanging up at once (`hupall`): events/s and CPU
 * per event. The daemon's count is checked through its channel limit (channel_limit = 10,000):
 * a call_user is refused while the calls are up and accepted before and after.
 *
 * Two more subscribers, each in its own process, receive the same events:
 * - `tracker only`: the daemon's own ESL connection (pbx/connection.ts) and channel model
 *   (src/channels), nothing else: the channel model's share of the daemon's figures;
 * - `bare esl-lite`, the baseline: esl-lite with one Map entry per channel.
 */
import { randomUUID } from 'node:crypto'
import { FreeSwitchClient } from 'esl-lite'
import { pino } from 'pino'
import { AUTH, DOMAIN, ESL_PASSWORD, GATEWAY } from './lib/config.js'
import { startWorker, type Worker } from './lib/procs.js'
import { startStack } from './lib/stack.js'
import { ratio, round } from './lib/stats.js'
import type { BenchContext, BenchOutput } from './context.js'

interface Mem {
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly arrayBuffers: number
  readonly gc: boolean
}
interface Events {
  readonly total: number
  readonly first: number
  readonly last: number
  readonly byName: Record<string, number>
}
interface Cpu {
  readonly user: number
  readonly system: number
}
type Who = 'daemon' | 'tracker_only' | 'bare_esl_lite'

const wallMs = (): number => performance.timeOrigin + performance.now()

async function until(what: string, cond: () => Promise<boolean>, ms: number, state?: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`scale: timed out waiting for ${what}${state !== undefined ? `: ${JSON.stringify(await state())}` : ''}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function all<T>(workers: Record<Who, Worker>, type: string): Promise<Record<Who, T>> {
  const out: Partial<Record<Who, T>> = {}
  for (const [k, w] of Object.entries(workers) as Array<[Who, Worker]>) out[k] = await w.call<T>(type)
  return out as Record<Who, T>
}

const seenAll = async (workers: Record<Who, Worker>, name: string, n: number): Promise<boolean> => {
  for (const w of Object.values(workers)) if (((await w.call<Events>('events')).byName[name] ?? 0) < n) return false
  return true
}

export async function benchScale(ctx: BenchContext): Promise<BenchOutput> {
  const N = ctx.quick ? 1000 : 10_000
  const stack = await startStack({
    users: 10,
    channelLimit: N,
    terminal: { answer_after: 0, hangup_after: 0.05 },
    pstn: { answer_after: 0 },
    ...(ctx.profileDir !== undefined ? { profile: { dir: ctx.profileDir, name: 'scale' } } : {}),
  })
  const trackerOnly = await startWorker('tracker-only', { args: { port: stack.eslPort, domain: DOMAIN }, exposeGc: true })
  const bare = await startWorker('esl-baseline', { args: { port: stack.eslPort }, exposeGc: true })
  const workers: Record<Who, Worker> = { daemon: stack.daemon, tracker_only: trackerOnly, bare_esl_lite: bare }
  const driver = new FreeSwitchClient({ host: '127.0.0.1', port: stack.eslPort, password: ESL_PASSWORD, logger: pino({ level: 'silent' }) })
  const probe = async () => {
    const res = await fetch(`${stack.baseUrl}/api/call_user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify({ user_name: 'u0', destination: '0311112222' }),
    })
    const body = (await res.json()) as { error?: { id: string } }
    return `${res.status}${body.error !== undefined ? ` ${body.error.id}` : ''}`
  }
  try {
    await until('the driver connected', async () => !((await driver.bgapi('status', 2000)) instanceof Error), 10_000)
    const probeIdle = await probe()
    await until('the probe call gone', async () => (await stack.sim.call<number>('live')) === 0, 10_000)
    await new Promise((r) => setTimeout(r, 500))
    const idle = await all<Mem>(workers, 'memory')

    // ---- N calls up
    await all(workers, 'resetEvents')
    const cpu0 = await all<Cpu>(workers, 'cpu')
    ctx.log(`scale: originating ${N} answered, parked calls`)
    const t0 = wallMs()
    let next = 0
    let refused = 0
    const loop = async () => {
      while (next < N) {
        const i = next++
        const vars = `origination_uuid=${randomUUID()},cod_domain=${DOMAIN},cod_request_id=scale-${i},cod_role=originator,cod_operation=call_external,originate_timeout=60`
        const r = await driver.bgapi(`originate {${vars}}sofia/gateway/${GATEWAY}/03${String(i).padStart(8, '0')} &park()`, 120_000)
        if (r instanceof Error || !String(r.body.response).startsWith('+OK')) refused++
      }
    }
    const progress = setInterval(() => ctx.log(`scale: ${next} originates sent`), 5000)
    await Promise.all(Array.from({ length: 200 }, loop)).finally(() => clearInterval(progress))
    if (refused > 0) throw new Error(`scale: ${refused} originates failed`)
    await until('every subscriber saw every call parked', () => seenAll(workers, 'CHANNEL_PARK', N), 120_000, () => all(workers, 'events'))
    const live = await stack.sim.call<number>('live')
    const trackedByTrackerOnly = await trackerOnly.call<number>('live')
    const upEvents = await all<Events>(workers, 'events')
    const cpu1 = await all<Cpu>(workers, 'cpu')
    const probeFull = await probe()
    const up = await all<Mem>(workers, 'memory')

    // ---- all hang up at once
    await all(workers, 'resetEvents')
    const cpu2 = await all<Cpu>(workers, 'cpu')
    ctx.log(`scale: ${live} live; hupall`)
    const tHup = wallMs()
    const hup = await driver.bgapi(`hupall NORMAL_CLEARING cod_domain ${DOMAIN}`, 120_000)
    if (hup instanceof Error) throw hup
    await until('every subscriber saw every call destroyed', () => seenAll(workers, 'CHANNEL_DESTROY', N), 120_000, () => all(workers, 'events'))
    const downEvents = await all<Events>(workers, 'events')
    const cpu3 = await all<Cpu>(workers, 'cpu')
    const probeEmpty = await probe()
    await new Promise((r) => setTimeout(r, 500))
    const after = await all<Mem>(workers, 'memory')

    const phase = (ev: Events, start: number, c0: Cpu, c1: Cpu) => {
      const seconds = (ev.last - start) / 1000
      const cpu = (c1.user - c0.user + c1.system - c0.system) / 1000
      return {
        events: ev.total,
        by_name: ev.byName,
        seconds: round(seconds),
        events_per_s: Math.round(ev.total / seconds),
        cpu_ms: round(cpu, 1),
        cpu_us_per_event: round((cpu * 1000) / ev.total, 2),
        events_per_cpu_second: Math.round(ev.total / (cpu / 1000)),
      }
    }
    const subject = (w: Who) => ({
      memory: {
        idle: idle[w],
        calls_up: up[w],
        after_hangup: after[w],
        per_call: { heap_bytes: Math.round((up[w].heapUsed - idle[w].heapUsed) / N), rss_bytes: Math.round((up[w].rss - idle[w].rss) / N) },
      },
      setup_events: phase(upEvents[w], t0, cpu0[w], cpu1[w]),
      hangup_events: phase(downEvents[w], tHup, cpu2[w], cpu3[w]),
    })
    const per = { daemon: subject('daemon'), tracker_only: subject('tracker_only'), bare_esl_lite: subject('bare_esl_lite') }
    const d = per.daemon
    const t = per.tracker_only
    const b = per.bare_esl_lite
    const result = {
      what: `${N} answered, parked calls in the simulator (another process), followed by the daemon; then hupall`,
      calls: N,
      simulator_live_channels: live,
      tracked_check: {
        note: 'channel_limit = calls: a 1-leg call_user is refused while the calls are up, accepted before and after',
        idle: probeIdle,
        with_calls_up: probeFull,
        after_hangup: probeEmpty,
        tracker_only_live_count: trackedByTrackerOnly,
        ok: probeIdle === '200' && probeFull === '429 channel_limit_reached' && probeEmpty === '200' && trackedByTrackerOnly === N,
      },
      memory_note:
        'process.memoryUsage() after two full GCs (--expose-gc), each subject in its own process. daemon: the whole daemon (esl-lite, channel model, engine, CTI, API, xml_curl); tracker_only: pbx/connection.ts + the channel model (src/channels); bare_esl_lite: esl-lite + a Map entry {state, domain} per channel',
      ...per,
      ratios: {
        daemon_heap_per_call_vs_bare: ratio(d.memory.per_call.heap_bytes, b.memory.per_call.heap_bytes),
        tracker_share_of_daemon_heap_per_call: ratio(t.memory.per_call.heap_bytes, d.memory.per_call.heap_bytes),
        daemon_hangup_cpu_per_event_vs_bare: ratio(d.hangup_events.cpu_us_per_event, b.hangup_events.cpu_us_per_event),
        tracker_only_hangup_cpu_per_event_vs_bare: ratio(t.hangup_events.cpu_us_per_event, b.hangup_events.cpu_us_per_event),
        daemon_hangup_events_per_s_vs_bare: ratio(d.hangup_events.events_per_s, b.hangup_events.events_per_s),
      },
    }
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`
    return {
      result,
      summary: [
        `${N} calls up: daemon heap ${mb(idle.daemon.heapUsed)} -> ${mb(up.daemon.heapUsed)} (after hangup ${mb(after.daemon.heapUsed)}), rss ${mb(idle.daemon.rss)} -> ${mb(up.daemon.rss)}`,
        `per live call: daemon ${d.memory.per_call.heap_bytes} B heap, tracker only ${t.memory.per_call.heap_bytes} B, bare esl-lite + Map ${b.memory.per_call.heap_bytes} B  -> daemon at ${result.ratios.daemon_heap_per_call_vs_bare}x`,
        `tracked: call_user ${probeIdle} idle, ${probeFull} with the calls up, ${probeEmpty} after; tracker-only count ${trackedByTrackerOnly}`,
        `hangup (${d.hangup_events.events} events): daemon ${d.hangup_events.events_per_s} events/s, ${d.hangup_events.cpu_us_per_event} us CPU/event; tracker only ${t.hangup_events.cpu_us_per_event} us; bare ${b.hangup_events.events_per_s} events/s, ${b.hangup_events.cpu_us_per_event} us  -> daemon at ${result.ratios.daemon_hangup_cpu_per_event_vs_bare}x the CPU`,
        `setup (${d.setup_events.events} events in ${d.setup_events.seconds} s): daemon ${d.setup_events.cpu_us_per_event} us CPU/event; tracker only ${t.setup_events.cpu_us_per_event}; bare ${b.setup_events.cpu_us_per_event}`,
      ],
      ...(ctx.profileDir !== undefined ? { profiles: { daemon: 'scale-daemon', simulator: 'scale-sim' } } : {}),
    }
  } finally {
    driver.end()
    await bare.stop()
    await trackerOnly.stop()
    await stack.stop()
  }
}
