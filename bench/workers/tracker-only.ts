/**
 * The daemon's ESL connection (pbx/connection.ts) and call tracker (origination/tracker.ts)
 * alone, without the engine, CTI, API or xml_curl: the scale benchmark compares its memory and
 * CPU with the whole daemon's to show the tracker's share of them.
 */
import { pino } from 'pino'
import type * as ConnectionModule from '../../src/pbx/connection.js'
import type * as TrackerModule from '../../src/origination/tracker.js'
import { memory, num, ready, serve, str, eventCounter } from './rpc.js'

const { connectPbx } = (await import(`${str('codRoot')}/pbx/connection.js`)) as typeof ConnectionModule
const { createTracker } = (await import(`${str('codRoot')}/origination/tracker.js`)) as typeof TrackerModule

const logger = pino({ level: 'warn' })
const pbx = connectPbx({ host: '127.0.0.1', port: num('port'), password: 'ClueCon', logger, commandTimeoutMs: 10000 })
const tracker = createTracker({ pbx, logger, commandTimeoutMs: 10000 })

const events = eventCounter()
pbx.onEvent((e) => {
  const name = e['Event-Name'] ?? '?'
  events.count(name)
})
while (!pbx.isConnected()) await new Promise((r) => setTimeout(r, 50))

serve(
  {
    memory: () => ({ ...memory(), live: tracker.liveChannelCount(str('domain')) }),
    cpu: () => process.cpuUsage(),
    live: () => tracker.liveChannelCount(str('domain')),
    events: events.snapshot,
    resetEvents: events.reset,
  },
  async () => {
    tracker.close()
    await pbx.close()
  },
)
await ready({})
