/**
 * The daemon under test (src/daemon.ts startDaemon, `freeswitch` mode against the simulator
 * worker). Besides running it, this worker counts the FreeSWITCH events the daemon received:
 * its listener is registered after the daemon's own (tracker, engine, CTI), so when it sees an
 * event the daemon has finished handling it.
 */
import type * as DaemonModule from '../../src/daemon.js'
import { failed, memory, ready, serve, str, wallMs } from './rpc.js'

// The compiled daemon (bench/lib/build.ts), as operators run it.
const { startDaemon } = (await import(`${str('codRoot')}/daemon.js`)) as typeof DaemonModule
const started = await startDaemon({ configFile: str('configFile'), httpPort: 0 })
if (!started.ok) {
  await failed(started.error.join('; '))
  process.exit(1)
}
const daemon = started.value

let counts = new Map<string, number>()
let total = 0
let first = 0
let last = 0
daemon.pbx.onEvent((e) => {
  const name = e['Event-Name'] ?? '?'
  counts.set(name, (counts.get(name) ?? 0) + 1)
  total++
  last = wallMs()
  if (first === 0) first = last
})

serve(
  {
    connected: () => daemon.pbx.isConnected(),
    memory: () => memory(),
    cpu: () => process.cpuUsage(),
    events: () => ({ total, first, last, byName: Object.fromEntries(counts) }),
    resetEvents: () => {
      counts = new Map()
      total = 0
      first = 0
      last = 0
    },
  },
  () => daemon.stop(),
)
await ready({ baseUrl: daemon.baseUrl })
