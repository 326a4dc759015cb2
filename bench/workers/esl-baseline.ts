/**
 * Baseline for the scale benchmark: a bare esl-lite client subscribed to the same events as the
 * daemon (pbx/connection.ts SUBSCRIBED_EVENTS), keeping the least any tracker must keep per
 * channel (a Map entry: uuid -> {state, domain}), deleted at CHANNEL_DESTROY. It sets the same
 * ESL filters (pbx/event-filter.ts EXACT_FILTERS), so that it receives the same events.
 */
import { FreeSwitchClient, type FreeSwitchEventData } from 'esl-lite'
import { pino } from 'pino'
import type * as ConnectionModule from '../../src/pbx/connection.js'
import type * as FilterModule from '../../src/pbx/event-filter.js'
import { args, memory, num, ready, serve, str, eventCounter } from './rpc.js'

const { SUBSCRIBED_EVENTS } = (await import(`${str('codRoot')}/pbx/connection.js`)) as typeof ConnectionModule
const { EXACT_FILTERS } = (await import(`${str('codRoot')}/pbx/event-filter.js`)) as typeof FilterModule

const client = new FreeSwitchClient({ host: '127.0.0.1', port: num('port'), password: typeof args['password'] === 'string' ? args['password'] : 'ClueCon', logger: pino({ level: 'silent' }) })
const channels = new Map<string, { state: string; domain: string | undefined }>()
const events = eventCounter()

const onEvent = (ev: FreeSwitchEventData) => {
  const data = ev.body.data
  const name = String(data['Event-Name'])
  const uuid = data['Unique-ID']
  if (typeof uuid === 'string') {
    if (name === 'CHANNEL_DESTROY') channels.delete(uuid)
    else if (name === 'CHANNEL_CREATE' || name === 'CHANNEL_ANSWER' || name === 'CHANNEL_HANGUP') {
      const domain = data['variable_cod_domain']
      channels.set(uuid, { state: name, domain: typeof domain === 'string' ? domain : undefined })
    }
  }
  events.count(name)
}
for (const name of SUBSCRIBED_EVENTS) client.on(name, onEvent)

// Subscriptions go out on connect; a status round trip proves the socket is up and subscribed.
for (;;) {
  const r = await client.bgapi('status', 2000)
  if (!(r instanceof Error)) break
  await new Promise((res) => setTimeout(res, 100))
}
// esl-lite keeps its `send` private (esl-lite.mjs FreeSwitchResponse.send); it is a plain method at runtime.
const send = (client as unknown as { send(command: string, headers: object, body: undefined, timeout: number): Promise<unknown> }).send.bind(client)
for (const f of EXACT_FILTERS) {
  const r = await send(f, {}, undefined, 2000)
  if (r instanceof Error) throw r
}

serve(
  {
    memory: () => ({ ...memory(), channels: channels.size }),
    cpu: () => process.cpuUsage(),
    events: events.snapshot,
    resetEvents: events.reset,
  },
  () => client.end(),
)
await ready({})
