/**
 * The daemon's ESL event filters (src/pbx/event-filter.ts): against the simulator, which applies
 * `filter` as mod_event_socket.c's event_handler does, FreeSWITCH sends the followed events and
 * only the CHANNEL_EXECUTE_COMPLETEs of the daemon's own executes; and the order of the filter
 * commands never lets a needed event be dropped when one of them is refused.
 */
import t from 'tap'
import { connectPbx, SUBSCRIBED_EVENTS } from '../../src/pbx/connection.js'
import * as commands from '../../src/pbx/commands.js'
import { applyEventFilters, CATCH_ALL_DELETE, CATCH_ALL_FILTER, EXACT_FILTERS, EXECUTE_NAME, FOLLOWED_EVENTS } from '../../src/pbx/event-filter.js'
import type { EslCommand, FsEvent } from '../../src/pbx/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { startSim } from '../sim/helpers.js'
import { waitFor } from '../support/wait.js'

const UUID = '0e99da33-1f39-45a3-9a2b-3c931bfecdb2'

t.test('through the simulator: the followed events, and only our own execute completions', async (t) => {
  const { sim, port } = await startSim(t)
  const pbx = connectPbx({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(() => pbx.close())
  const events: FsEvent[] = []
  pbx.onEvent((e) => events.push(e))
  await waitFor('link up', () => pbx.isConnected(), 8000)
  await waitFor('filters applied', () => sim.commands.some((c) => c.text === CATCH_ALL_DELETE), 8000)
  const texts = sim.commands.map((c) => c.text)
  const first = texts.indexOf(CATCH_ALL_FILTER)
  t.ok(first >= 0, 'the catch-all filter goes first')
  for (const f of EXACT_FILTERS) t.ok(texts.indexOf(f) > first, `${f} after it`)
  t.ok(texts.indexOf(CATCH_ALL_DELETE) > Math.max(...EXACT_FILTERS.map((f) => texts.indexOf(f))), 'the catch-all deleted last')

  // The call runs an application (park) whose completion is not ours.
  const placed = await pbx.bgapi(`originate {origination_uuid=${UUID}}sofia/internal/sip:alice@127.0.0.1:5070 &park()` as EslCommand, 5000)
  t.ok(placed.ok, 'originate accepted')
  await waitFor('park', () => events.some((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === UUID), 8000)
  await waitFor('park ran', () => sim.executedApps(UUID).some((x) => x.app === 'park'), 8000)

  const app = commands.app('set', 'cod_probe=1')
  if (!app.ok) throw new Error('app')
  const done = await pbx.execute(UUID, app.value, 5000)
  t.ok(done.ok, 'execute resolves')
  if (done.ok) {
    t.equal(done.value['Application'], 'set')
    t.equal(done.value['Application-UUID-Name'], EXECUTE_NAME, 'named, as the filter wants')
  }
  const killed = await pbx.bgapi(`uuid_kill ${UUID}` as EslCommand, 5000)
  t.ok(killed.ok, 'uuid_kill accepted')
  await waitFor('destroy', () => events.some((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === UUID), 8000)
  const completions = events.filter((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE')
  t.equal(completions.length, 1, 'one CHANNEL_EXECUTE_COMPLETE reached the daemon, its own (not park\'s, which ended with the call)')
  t.equal(completions[0]?.['Application'], 'set')
  t.notOk(events.some((e) => e['Event-Name'] === 'CHANNEL_EXECUTE'), 'no CHANNEL_EXECUTE')
  t.ok(events.some((e) => e['Event-Name'] === 'CHANNEL_CREATE' && e['Unique-ID'] === UUID), 'CHANNEL_CREATE passes')
  t.ok(events.some((e) => e['Event-Name'] === 'BACKGROUND_JOB'), 'BACKGROUND_JOB passes')
})

t.test('a refused filter leaves the catch-all: nothing the daemon needs is dropped', async (t) => {
  for (const refuse of [CATCH_ALL_FILTER, EXACT_FILTERS[3] as string, CATCH_ALL_DELETE]) {
    const sent: string[] = []
    const outcome = await applyEventFilters(async (c) => {
      sent.push(c)
      return c === refuse ? '-ERR invalid syntax' : '+OK filter added.'
    })
    t.same(outcome, { kind: 'unfiltered', refused: refuse, reply: '-ERR invalid syntax' }, `refusing ${refuse}`)
    if (refuse === CATCH_ALL_FILTER) t.same(sent, [CATCH_ALL_FILTER], 'no exact filter without the catch-all before it')
    else if (refuse !== CATCH_ALL_DELETE) t.notOk(sent.includes(CATCH_ALL_DELETE), 'the catch-all is kept')
  }
  const unanswered = await applyEventFilters(async (c) => (c === CATCH_ALL_FILTER ? '+OK' : undefined))
  t.equal(unanswered.kind, 'unfiltered', 'an unanswered filter counts as refused')
  const all: string[] = []
  t.same(await applyEventFilters(async (c) => (all.push(c), '+OK filter added.')), { kind: 'filtered' })
  t.same(all, [CATCH_ALL_FILTER, ...EXACT_FILTERS, CATCH_ALL_DELETE])
})

t.test('every event the connection subscribes to has its filter (else FreeSWITCH would never send it)', async (t) => {
  const followed: readonly string[] = FOLLOWED_EVENTS
  for (const name of SUBSCRIBED_EVENTS) {
    if (name === 'CHANNEL_EXECUTE_COMPLETE') continue // only our own, by Application-UUID-Name
    t.ok(followed.includes(name), `${name} is followed`)
  }
  t.ok(followed.includes('SHUTDOWN'), 'SHUTDOWN (the link judges it) is followed')
})
