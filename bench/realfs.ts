/**
 * The daemon against a real FreeSWITCH 1.10.12 (issue 15): `call_user` at a fixed concurrency,
 * each call answered at once by a SIP phone (npm `sip`, test/realfs/phones.ts), bridged by the
 * daemon's dialplan to the PSTN gateway, answered by the carrier and hung up by it 0.2 s later.
 * Runs only when the prebuilt FreeSWITCH is beside the clone (../shared/freeswitch-dist/fs.sh,
 * as test/realfs/ finds it); otherwise it reports itself skipped.
 *
 * Processes: FreeSWITCH and the phones (bench/workers/realfs-switch.ts, which holds
 * /tmp/realfs.lock), the daemon (bench/workers/daemon.ts, `freeswitch` mode), bare esl-lite with
 * the daemon's subscriptions and filters (bench/workers/esl-baseline.ts: the baseline CPU for
 * the same events), and two raw ESL connections here that count the bytes FreeSWITCH sends:
 * one subscribed and filtered as the daemon is now, one subscribed as it was before issue 15
 * (every followed event, CHANNEL_HANGUP_COMPLETE and every CHANNEL_EXECUTE_COMPLETE, no filter).
 *
 * Figures: setups/s, p50/p99, CPU per call of the daemon, of bare esl-lite and of FreeSWITCH,
 * event bytes and events per answered call (now and as before); and (issue 32) the daemon's share
 * of the box: its CPU per call over FreeSWITCH's, both read at the same edges of the measured window.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOMAIN, FS_SH, AUTH, freePort, laneConfig, type AppServer } from '../test/realfs/world.js'
import { EXACT_FILTERS } from '../src/pbx/event-filter.js'
import { SUBSCRIBED_EVENTS } from '../src/pbx/connection.js'
import { cpuWindow, perRequest, withCpu } from './lib/cpu.js'
import { runLoad } from './lib/load.js'
import { startWorker, type Worker } from './lib/procs.js'
import { ratio } from './lib/stats.js'
import { dur, type BenchContext, type BenchOutput } from './context.js'

const CONCURRENCY = 8
const ESL_PASSWORD = 'bench-realfs-esl-secret'
const XML_CURL_PASSWORD = 'bench-realfs-xml-curl'
const USERS = ['alice', 'bob', 'carol', 'dave']
/** The subscription before issue 15: what the daemon received per call then. */
const OLD_EVENTS = [...SUBSCRIBED_EVENTS, 'CHANNEL_HANGUP_COMPLETE', 'CHANNEL_EXECUTE_COMPLETE']

/** The shipped example domain, with every terminal answering at once, a short PSTN call and room for the load. */
const benchDomain = (y: string): string =>
  y
    .replace('channel_limit: 20', 'channel_limit: 1000')
    .replace(/sim: \{ terminals: \[[^\]]*\] \}/g, 'sim: { terminals: [ { answer_after: 0 } ] }')
    .replace('default: { answer_after: 1 }', 'default: { answer_after: 0, hangup_after: 0.2 }')

/** A raw ESL connection that counts what FreeSWITCH sends it (bytes, and events by name). */
class ByteCounter {
  readonly byName: Record<string, { events: number; bytes: number }> = {}
  private buf = ''
  private from = 0
  private constructor(private readonly socket: Socket) {}

  static async open(port: number, commands: readonly string[]): Promise<ByteCounter> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const c = new ByteCounter(socket)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => c.onData(chunk))
    socket.on('error', () => undefined)
    for (const cmd of [`auth ${ESL_PASSWORD}`, ...commands]) socket.write(`${cmd}\n\n`)
    await new Promise((r) => setTimeout(r, 500))
    return c
  }

  /** The replies of the originates FreeSWITCH ran (first word of each job body), by reply. */
  readonly originates: Record<string, number> = {}

  private jobResult(json: string): void {
    try {
      const ev = JSON.parse(json) as Record<string, string>
      if (ev['Job-Command'] !== 'originate') return
      const reply = (ev['_body'] ?? '').trim().replace(/^\+OK .*/, '+OK').slice(0, 40)
      this.originates[reply] = (this.originates[reply] ?? 0) + 1
    } catch {
      // not JSON: not counted
    }
  }

  /** Starts counting from now. */
  reset(): void {
    for (const k of Object.keys(this.byName)) delete this.byName[k]
    for (const k of Object.keys(this.originates)) delete this.originates[k]
    this.from = this.socket.bytesRead
  }

  get bytes(): number {
    return this.socket.bytesRead - this.from
  }

  /** Frames are cut by position, and the unread rest kept once per chunk: linear in the bytes received. */
  private onData(chunk: string): void {
    this.buf += chunk
    let pos = 0
    for (;;) {
      const end = this.buf.indexOf('\n\n', pos)
      if (end < 0) break
      const head = this.buf.slice(pos, end)
      const len = Number(/Content-Length: (\d+)/i.exec(head)?.[1] ?? 0)
      if (this.buf.length < end + 2 + len) break
      if (/Content-Type: text\/event-json/i.test(head)) {
        const name = /"Event-Name":"([A-Z_]+)"/.exec(this.buf.slice(end + 2, end + 2 + Math.min(len, 200)))?.[1] ?? '?'
        const e = (this.byName[name] ??= { events: 0, bytes: 0 })
        e.events += 1
        e.bytes += end + 2 + len - pos
        if (name === 'BACKGROUND_JOB') this.jobResult(this.buf.slice(end + 2, end + 2 + len))
      }
      pos = end + 2 + len
    }
    this.buf = this.buf.slice(pos)
  }

  /** Resolves once nothing arrived for `quietMs` (FreeSWITCH has sent everything). */
  async drained(quietMs = 1000): Promise<void> {
    for (let last = -1; last !== this.socket.bytesRead; ) {
      last = this.socket.bytesRead
      await new Promise((r) => setTimeout(r, quietMs))
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

const perCall = (counter: ByteCounter, calls: number) => ({
  bytes_per_call: Math.round(counter.bytes / calls),
  events_per_call: Number((Object.values(counter.byName).reduce((n, e) => n + e.events, 0) / calls).toFixed(1)),
  by_event: Object.fromEntries(
    Object.entries(counter.byName)
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .map(([name, e]) => [name, { per_call: Number((e.events / calls).toFixed(2)), bytes_per_call: Math.round(e.bytes / calls) }]),
  ),
})

export async function benchRealfs(ctx: BenchContext): Promise<BenchOutput> {
  if (!existsSync(FS_SH)) {
    return { result: { skipped: `no real FreeSWITCH at ${FS_SH}` }, summary: [`skipped: no real FreeSWITCH at ${FS_SH}`] }
  }
  // A warm daemon (bench/api.ts WARMUP_MS says why 30 s): at this rate (~35 setups/s) a 2 s
  // warm-up was 70 calls, and V8's compiling of the daemon's code fell in the window.
  const warmupMs = dur(ctx, 30000)
  const durationMs = dur(ctx, 10000)
  const dir = await mkdtemp(join(tmpdir(), 'cod-bench-realfs-'))
  const noApp: AppServer = { base: 'http://127.0.0.1:9', hits: [], documents: {}, close: () => undefined }
  const cfg = await laneConfig(noApp, ESL_PASSWORD, XML_CURL_PASSWORD, benchDomain)
  const [eslPort, sipPort, xmlCurlPort, carrierPort] = [await freePort(), await freePort(), await freePort(), await freePort('127.0.0.2')]
  const workers: Worker[] = []
  const counters: ByteCounter[] = []
  try {
    ctx.log('realfs: starting FreeSWITCH (waiting for /tmp/realfs.lock)')
    const sw = await startWorker('realfs-switch', {
      args: {
        dir,
        domain: DOMAIN,
        eslPort,
        sipPort,
        carrierPort,
        xmlCurlPort,
        rtpBase: 20000 + 2 * Math.floor(Math.random() * 10000),
        eslPassword: ESL_PASSWORD,
        xmlCurlPassword: XML_CURL_PASSWORD,
        users: cfg.users,
        pstn: cfg.pstn,
      },
    })
    workers.push(sw)
    const configFile = join(cfg.dir, 'daemon.yaml')
    await writeFile(configFile, cfg.daemonYaml('freeswitch', eslPort))
    const daemon = await startWorker('daemon', {
      args: { configFile, xmlCurlPort, journalDir: join(dir, 'journal') },
      ...(ctx.profileDir !== undefined ? { profile: { dir: ctx.profileDir, name: 'realfs-daemon' } } : {}),
    })
    workers.push(daemon)
    for (let i = 0; !(await daemon.call<boolean>('connected')); i++) {
      if (i > 200) throw new Error('the daemon did not connect to FreeSWITCH')
      await new Promise((r) => setTimeout(r, 50))
    }
    await sw.call('phones')
    const bare = await startWorker('esl-baseline', { args: { port: eslPort, password: ESL_PASSWORD } })
    workers.push(bare)
    const now = await ByteCounter.open(eslPort, [`event json ${SUBSCRIBED_EVENTS.join(' ')} CUSTOM`, ...EXACT_FILTERS])
    const before = await ByteCounter.open(eslPort, [`event json ${OLD_EVENTS.join(' ')} CUSTOM`])
    counters.push(now, before)

    ctx.log(`realfs: call_user at concurrency ${CONCURRENCY} for ${(warmupMs + durationMs) / 1000} s`)
    now.reset()
    before.reset()
    const fsBefore = (await sw.call<{ freeswitch_ms: number }>('cpu')).freeswitch_ms
    const window = cpuWindow({ daemon, bare })
    // FreeSWITCH's process CPU (/proc/<pid>/stat) read at the same two edges as the daemon's: the
    // share of the box is the daemon's CPU per call over FreeSWITCH's, both in the measured window.
    const fsAt: Partial<Record<'open' | 'close', number>> = {}
    const edge = async (e: 'open' | 'close') => {
      await Promise.all([window.edge(e), sw.call<{ freeswitch_ms: number }>('cpu').then((c) => (fsAt[e] = c.freeswitch_ms))])
    }
    const { value: load, cpu_ms: cpu } = await withCpu({ daemon, bare }, async () => {
      const r = await runLoad({
        url: `${String(daemon.info.baseUrl)}/api/call_user`,
        headers: { 'content-type': 'application/json', authorization: AUTH },
        body: (i) => JSON.stringify({ user_name: USERS[i % USERS.length], destination: '0355550000' }),
        concurrency: CONCURRENCY,
        warmupMs,
        durationMs,
        ok: (status) => status === 200,
        atWindow: edge,
      })
      // The calls end 0.2 s after they are answered: let the last ones finish inside the CPU window.
      await new Promise((res) => setTimeout(res, 3000))
      return r
    })
    const fsMs = (await sw.call<{ freeswitch_ms: number }>('cpu')).freeswitch_ms - fsBefore
    await Promise.all([now.drained(), before.drained()])
    const requests = load.completed_total - load.errors
    // The measured window (after the warm-up): per call_user accepted in it, each one answered
    // call here (the whole-run figures below count the answered calls themselves).
    const windowCpu = window.cpu_ms()
    const inWindow = load.completed_in_window
    // An answered call_user is one bridge (the user's leg to the carrier's): figures per answered call.
    const calls = now.byName['CHANNEL_BRIDGE']?.events ?? 0
    const fsWindowMs = (fsAt.close ?? NaN) - (fsAt.open ?? NaN)
    const daemonPerCall = perRequest(windowCpu.daemon, inWindow)
    const fsPerCall = perRequest(fsWindowMs, inWindow)
    const result = {
      what: `POST /api/call_user on a real FreeSWITCH 1.10.12 (SIP phone answers at once, bridged to the carrier, which hangs up 0.2 s after answering), closed loop at ${CONCURRENCY}`,
      concurrency: CONCURRENCY,
      daemon: {
        ...load,
        setups_per_s: load.requests_per_s,
        daemon_cpu_ms_per_call: perRequest(windowCpu.daemon, inWindow),
        daemon_cpu_ms_per_call_whole_run: perRequest(cpu.daemon, calls),
        freeswitch_cpu_ms_per_call: perRequest(fsMs, calls),
        // Issue 32: FreeSWITCH's CPU over the measured window only, per call_user accepted in it (as the daemon's).
        freeswitch_cpu_ms_per_call_window: fsPerCall,
        daemon_cpu_ms_per_request_whole_run: perRequest(cpu.daemon, requests),
      },
      baseline_bare_esl_lite: {
        what: 'esl-lite with the daemon subscriptions and filters, one Map entry per channel',
        cpu_ms_per_call: perRequest(windowCpu.bare, inWindow),
        cpu_ms_per_call_whole_run: perRequest(cpu.bare, calls),
      },
      requests_accepted: requests,
      answered_calls: calls,
      originate_replies: now.originates,
      event_bytes: { calls, now: perCall(now, calls), before_issue_15: perCall(before, calls) },
      ratios: {
        daemon_cpu_vs_bare_esl_lite: ratio(daemonPerCall, perRequest(windowCpu.bare, inWindow)),
        // Issue 32's "share of the box": target ≤ 0.05.
        daemon_cpu_vs_freeswitch_cpu: ratio(daemonPerCall, fsPerCall, 4),
        event_bytes_now_vs_before: ratio(now.bytes, before.bytes),
      },
    }
    return {
      result,
      summary: [
        `answered        ${calls} of ${requests} accepted requests (originate replies ${JSON.stringify(now.originates)})`,
        `call_user       ${load.requests_per_s} setups/s  p50 ${load.latency.p50_ms} ms  p99 ${load.latency.p99_ms} ms  (errors ${load.errors}${load.errors > 0 ? `: ${load.error_samples.slice(0, 1).join('')}` : ''})`,
        `CPU per call    daemon ${result.daemon.daemon_cpu_ms_per_call} ms, bare esl-lite ${result.baseline_bare_esl_lite.cpu_ms_per_call} ms (x${result.ratios.daemon_cpu_vs_bare_esl_lite}) in the measured window; whole run, warm-up included: ${result.daemon.daemon_cpu_ms_per_call_whole_run} ms and ${result.baseline_bare_esl_lite.cpu_ms_per_call_whole_run} ms; FreeSWITCH ${result.daemon.freeswitch_cpu_ms_per_call} ms`,
        `share of box    daemon ${daemonPerCall} ms / FreeSWITCH ${fsPerCall} ms CPU per call in the same window = ${(result.ratios.daemon_cpu_vs_freeswitch_cpu * 100).toFixed(1)} % (target <= 5 %)`,
        `event bytes     ${result.event_bytes.now.bytes_per_call} B per call (${result.event_bytes.now.events_per_call} events); before issue 15: ${result.event_bytes.before_issue_15.bytes_per_call} B (${result.event_bytes.before_issue_15.events_per_call} events)  -> x${result.ratios.event_bytes_now_vs_before}`,
      ],
      ...(ctx.profileDir !== undefined ? { profiles: { daemon: 'realfs-daemon' } } : {}),
    }
  } finally {
    for (const c of counters) c.close()
    for (const w of workers.reverse()) await w.stop()
    await rm(dir, { recursive: true, force: true })
    await rm(cfg.dir, { recursive: true, force: true })
  }
}
