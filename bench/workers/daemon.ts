/**
 * The daemon under test (src/daemon.ts startDaemon, `freeswitch` mode against the simulator
 * worker). Besides running it, this worker counts the FreeSWITCH events the daemon received:
 * its listener is registered after the daemon's own (tracker, engine, CTI), so when it sees an
 * event the daemon has finished handling it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeHeapSnapshot } from 'node:v8'
import type * as DaemonModule from '../../src/daemon.js'
import { openFds } from '../lib/procfs.js'
import { args, failed, memory, ready, serve, str, eventCounter } from './rpc.js'

// The compiled daemon (bench/lib/build.ts), as operators run it.
const { startDaemon } = (await import(`${str('codRoot')}/daemon.js`)) as typeof DaemonModule
const xmlCurlPort = args['xmlCurlPort']
const journalDir = args['journalDir']
const started = await startDaemon({
  configFile: str('configFile'),
  httpPort: 0,
  // The realfs benchmark gives FreeSWITCH the xml_curl URL before the daemon starts.
  ...(typeof xmlCurlPort === 'number' ? { xmlCurlPort } : {}),
  ...(typeof journalDir === 'string' ? { journalDir } : {}),
})
if (!started.ok) {
  await failed(started.error.join('; '))
  process.exit(1)
}
const daemon = started.value

// Event-loop delay (capacity benchmark: where the daemon breaks): reset at each step.
const loopDelay = monitorEventLoopDelay({ resolution: 10 })
loopDelay.enable()

const events = eventCounter()
daemon.pbx.onEvent((e) => {
  const name = e['Event-Name'] ?? '?'
  events.count(name)
})

// As `cod start` does (src/cli/start.ts): the soak benchmark sends real SIGHUPs to this process.
process.on('SIGHUP', () => {
  void daemon.reload().then((r) => {
    reloads.push(r.ok ? 'ok' : r.error.join('; '))
  })
})
const reloads: string[] = []

serve(
  {
    connected: () => daemon.pbx.isConnected(),
    /**
     * The soak benchmark's sample: heap and RSS after two full collections, open file
     * descriptors, the event-loop delay since the last sample (reset), the reloads done.
     */
    sample: () => {
      const m = memory()
      const r = { heap_used: m.heapUsed, rss: m.rss, fds: openFds(process.pid), loop_delay_p99_ms: Number((loopDelay.percentile(99) / 1e6).toFixed(1)), loop_delay_max_ms: Number((loopDelay.max / 1e6).toFixed(1)), reloads: [...reloads] }
      loopDelay.reset()
      return r
    },
    /** Event-loop delay since the last call (ms), and the ESL link's pending background jobs. */
    load: () => {
      const r = { loop_delay_p99_ms: Number((loopDelay.percentile(99) / 1e6).toFixed(1)), loop_delay_max_ms: Number((loopDelay.max / 1e6).toFixed(1)), pending_jobs: (daemon.pbx as { stats?: () => { pendingJobs: number } }).stats?.().pendingJobs }
      loopDelay.reset()
      return r
    },
    memory: () => memory(),
    /** A heap snapshot after full collections, to `file` (what a soak's growth is made of). */
    heapSnapshot: (m) => {
      memory()
      return writeHeapSnapshot(String(m.file))
    },
    cpu: () => process.cpuUsage(),
    events: events.snapshot,
    resetEvents: events.reset,
  },
  () => daemon.stop(),
)
await ready({ baseUrl: daemon.baseUrl, xmlCurlUrl: daemon.xmlCurlUrl })
