/**
 * The daemon's ESL connection (pbx/connection.ts) and channel model (src/channels) alone,
 * without the engine, CTI, API or xml_curl: the scale benchmark compares its memory and CPU
 * with the whole daemon's to show the channel model's share of them. (The subject keeps its
 * name, `tracker_only`, so that results stay comparable with earlier runs.)
 */
import { pino } from 'pino'
import type * as ConnectionModule from '../../src/pbx/connection.js'
import type * as ChannelsModule from '../../src/channels/index.js'
import { memory, num, ready, serve, str, eventCounter } from './rpc.js'

const { connectPbx } = (await import(`${str('codRoot')}/pbx/connection.js`)) as typeof ConnectionModule
const { createChannelModel } = (await import(`${str('codRoot')}/channels/index.js`)) as typeof ChannelsModule

const logger = pino({ level: 'warn' })
const pbx = connectPbx({ host: '127.0.0.1', port: num('port'), password: 'ClueCon', logger, commandTimeoutMs: 10000 })
const channels = createChannelModel({ pbx, logger, commandTimeoutMs: 10000 })

const events = eventCounter()
pbx.onEvent((e) => {
  const name = e['Event-Name'] ?? '?'
  events.count(name)
})
while (!pbx.isConnected()) await new Promise((r) => setTimeout(r, 50))

serve(
  {
    memory: () => ({ ...memory(), live: channels.liveCount(str('domain')) }),
    cpu: () => process.cpuUsage(),
    live: () => channels.liveCount(str('domain')),
    events: events.snapshot,
    resetEvents: events.reset,
  },
  async () => {
    channels.close()
    await pbx.close()
  },
)
await ready({})
