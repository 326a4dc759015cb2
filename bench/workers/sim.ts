/** The FreeSWITCH simulator (src/sim) on a given port, in its own process. */
import type * as StoreModule from '../../src/runtime/store.js'
import type * as SimModule from '../../src/sim/index.js'
import { failed, num, ready, serve, str } from './rpc.js'

const { ConfigStore } = (await import(`${str('codRoot')}/runtime/store.js`)) as typeof StoreModule
const { Simulator } = (await import(`${str('codRoot')}/sim/index.js`)) as typeof SimModule

const opened = await ConfigStore.open(str('configFile'))
if (!opened.ok) {
  await failed(opened.error.join('; '))
  process.exit(1)
}
const cfg = opened.value.current().config
const sim = new Simulator({
  domains: cfg.domains,
  password: cfg.daemon.freeswitch.password,
  sipProfile: cfg.daemon.freeswitch.sip_profile,
  xmlCurl: { url: str('xmlCurlUrl'), username: cfg.daemon.xml_curl.username, password: cfg.daemon.xml_curl.password },
  timeScale: num('timeScale', 1),
  // Vanilla FreeSWITCH creates at most 30 sessions a second, and the simulator holds to it since
  // issue 31 (so does the daemon, pacing its originates at 24 a second): every benchmark above
  // that rate measured the pace, not the daemon. A box meant for hundreds of setups a second
  // raises switch.conf.xml's sessions-per-second; so does the realfs benchmark, and so does this.
  sessionsPerSecond: num('sessionsPerSecond', 1000),
})
const port = await sim.listen(num('port'))
serve(
  {
    live: () => sim.liveChannels().length,
    commands: () => sim.commands.length,
    cpu: () => process.cpuUsage(),
  },
  () => sim.close(),
)
await ready({ port })
