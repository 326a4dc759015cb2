/**
 * The npm esl-lite client, as the daemon uses it, against the simulator: authentication, one
 * `event json <NAME>` per subscribed event, bgapi with its job-uuid header, sendmsg execute.
 */
import t from 'tap'
import { FreeSwitchClient } from 'esl-lite'
import { silentLogger } from '../../src/util/logger.js'
import { startSim } from './helpers.js'

const UUID = '0e99da33-1f39-45a3-9a2b-3c931bfecdb2'

t.test('esl-lite: bgapi originate end to end, events, execute, kill', async (t) => {
  const { sim, port } = await startSim(t)
  const client = new FreeSwitchClient({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger() })
  t.teardown(() => client.end())

  const seen: string[] = []
  const parked = new Promise<void>((resolve) => {
    client.on('CHANNEL_PARK', (ev) => {
      if (ev.body.uniqueID === UUID) resolve()
    })
  })
  const gone = new Promise<void>((resolve) => {
    client.on('CHANNEL_DESTROY', (ev) => {
      if (ev.body.uniqueID === UUID) resolve()
    })
  })
  for (const name of ['CHANNEL_CREATE', 'CHANNEL_ANSWER', 'CHANNEL_HANGUP'] as const) {
    client.on(name, (ev) => {
      if (ev.body.uniqueID === UUID) seen.push(name)
    })
  }

  const res = await client.bgapi(`originate {origination_uuid=${UUID},originate_timeout=20,cod_request_id=r1}sofia/internal/sip:alice@127.0.0.1:5070 &park()`, 5000)
  if (res instanceof Error) throw res
  t.equal(res.body.response, `+OK ${UUID}\n`, 'the BACKGROUND_JOB body')
  await parked

  const exec = await client.command_uuid(UUID, 'set', 'cod_test=yes', 5000)
  if (exec instanceof Error) throw exec
  t.equal(exec.body.data['Application'], 'set', 'command_uuid resolves on its CHANNEL_EXECUTE_COMPLETE')
  t.equal(sim.liveChannels().find((c) => c.uuid === UUID)?.variables['cod_test'], 'yes')

  const busy = await client.bgapi('originate error/user_busy &park()', 5000)
  if (busy instanceof Error) throw busy
  t.equal(busy.body.response, '-ERR USER_BUSY\n')

  const kill = await client.bgapi(`uuid_kill ${UUID}`, 5000)
  if (kill instanceof Error) throw kill
  t.equal(kill.body.response, '+OK\n')
  await gone
  t.same(seen, ['CHANNEL_CREATE', 'CHANNEL_ANSWER', 'CHANNEL_HANGUP'])

  const texts = sim.commands.map((c) => c.text)
  t.equal(texts[0], 'auth ClueCon')
  t.ok(texts.includes('event json CHANNEL_PARK'), 'esl-lite subscribes one event name per command')
  t.ok(texts.some((x) => x.startsWith('bgapi originate {origination_uuid=')), 'the originate went through bgapi')
  t.ok(texts.includes(`sendmsg ${UUID}`))
})
