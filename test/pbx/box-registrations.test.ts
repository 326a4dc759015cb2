/**
 * The box's registrations as the daemon reads them (src/pbx/box-registrations.ts): the sofia
 * events and `show registrations as json` of the real switch
 * (test/fixtures/freeswitch/esl/27-sofia-register-events.txt) read into changes and users; bad
 * replies refused; and, through the simulator, that a daemon which does not ask is sent none of
 * these events (no subscription, no filter: a single daemon receives what it did before), while
 * one that asks gets them on every socket, reconnections included.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { boxRegistrations, parseRegistrations, registrationChange } from '../../src/pbx/box-registrations.js'
import { connectPbx } from '../../src/pbx/connection.js'
import { CATCH_ALL_DELETE } from '../../src/pbx/event-filter.js'
import type { FsEvent } from '../../src/pbx/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { startSim } from '../sim/helpers.js'
import { waitFor } from '../support/wait.js'

const FIXTURE = readFileSync(new URL('../fixtures/freeswitch/esl/27-sofia-register-events.txt', import.meta.url), 'latin1')

/** The json events of the capture's socket B, as the reader hands them over (parsed). */
const capturedJson = (): FsEvent[] =>
  [...FIXTURE.matchAll(/Content-Type: text\/event-json\n\n(\{[^\n]*\})\n/g)].map((m) => JSON.parse(m[1] as string) as FsEvent)

t.test("the real switch's events read into changes (fixture esl/27)", async (t) => {
  const changes = capturedJson().map(registrationChange)
  t.same(changes, [
    { kind: 'register', user: 'dave', domain: 'example.test', expiresInS: 600 },
    { kind: 'register', user: 'dave', domain: 'example.test', expiresInS: 600 },
    { kind: 'unregister', user: 'dave', domain: 'example.test' },
    { kind: 'register', user: 'dave', domain: 'example.test', expiresInS: 10 },
    { kind: 'expire', user: 'dave', domain: 'example.test' },
  ])
})

t.test('what is not a registration change is ignored', async (t) => {
  t.equal(registrationChange({ 'Event-Name': 'CUSTOM', 'Event-Subclass': 'conference::maintenance', username: 'a', realm: 'b' }), undefined)
  t.equal(registrationChange({ 'Event-Name': 'CHANNEL_CREATE' }), undefined)
  t.equal(registrationChange({ 'Event-Subclass': 'sofia::register', realm: 'example.test' }), undefined, 'no user')
  t.equal(registrationChange({ 'Event-Subclass': 'sofia::unregister', username: 'bob', realm: '' }), undefined, 'no domain')
  t.same(registrationChange({ 'Event-Subclass': 'sofia::register', username: 'bob', realm: 'd', expires: 'soon' }), { kind: 'register', user: 'bob', domain: 'd', expiresInS: 0 }, 'an unreadable expires counts as none')
})

t.test("show registrations as json of the real switch: one user per row (fixture esl/27)", async (t) => {
  const bodies = [...FIXTURE.matchAll(/Content-Length: \d+\n\n(\{"row_count":[^\n]*\})/g)].map((m) => m[1] as string)
  const first = parseRegistrations(bodies[0] as string)
  t.ok(first.ok)
  if (first.ok) {
    t.same(first.value.map((u) => u.user), ['alice', 'bob', 'carol', 'erin'])
    t.ok(first.value.every((u) => u.domain === 'example.test' && u.expiresAt === 1795535953000), 'expires: epoch seconds, kept as ms')
  }
  const withDave = parseRegistrations(bodies[1] as string)
  t.ok(withDave.ok && withDave.value.some((u) => u.user === 'dave'))
  t.same(parseRegistrations('{"row_count": 0}\n'), { ok: true, value: [] }, 'the idle form')
})

t.test('bad listings are errors, never an empty box', async (t) => {
  for (const bad of ['', '-ERR no reply', '{"rows":[]}', '{"row_count":1,"rows":{}}', 'null']) t.notOk(parseRegistrations(bad).ok, JSON.stringify(bad))
  const partial = parseRegistrations('{"row_count":2,"rows":[{"reg_user":"","realm":"d"},{"reg_user":"u","realm":"d","expires":"x"}]}')
  t.same(partial, { ok: true, value: [{ user: 'u', domain: 'd', expiresAt: 0 }] }, 'rows without a user are skipped')
})

t.test('through the simulator: not asked, nothing subscribed; asked, the events on every socket', async (t) => {
  const { sim, port } = await startSim(t)
  const pbx = connectPbx({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(() => pbx.close())
  await waitFor('link up', () => pbx.isConnected(), 8000)
  await waitFor('filters applied', () => sim.commands.some((c) => c.text === CATCH_ALL_DELETE), 8000)
  t.notOk(sim.commands.some((c) => /sofia::|Event-Subclass/.test(c.text)), 'a daemon that does not ask subscribes to no sofia event')

  const box = boxRegistrations(pbx, 2000)
  const changes: unknown[] = []
  box.onChange((c) => changes.push(c))
  await waitFor('subscribed', () => ['sofia::register', 'sofia::unregister', 'sofia::expire'].every((s) => sim.commands.some((c) => c.text.trim() === `event json CUSTOM ${s}`)), 8000)
  await waitFor('filtered', () => sim.commands.some((c) => c.text === 'filter Event-Subclass sofia::register'), 8000)
  sim.setTerminalBehaviour('example.test', 'bob', 0, { behaviour: 'unregistered' })
  await waitFor('the unregister', () => changes.length === 1, 8000)
  t.same(changes[0], { kind: 'unregister', user: 'bob', domain: 'example.test' })
  t.same(await box.isRegistered('bob', 'example.test'), { ok: true, value: false })
  t.same(await box.isRegistered('alice', 'example.test'), { ok: true, value: true })
  const listed = await box.list()
  t.same(listed.ok ? listed.value.map((u) => u.user) : listed, ['alice', 'carol', 'erin'])

  let reconnected = 0
  box.onConnected(() => reconnected++)
  const commandsBefore = sim.commands.length
  sim.dropConnections()
  await waitFor('reconnected', () => reconnected === 1 && pbx.isConnected(), 8000)
  await waitFor('filters again', () => sim.commands.slice(commandsBefore).some((c) => c.text === CATCH_ALL_DELETE), 8000)
  t.ok(sim.commands.slice(commandsBefore).some((c) => c.text === 'filter Event-Subclass sofia::register'), 'the subclass filters on the new socket, before the catch-all goes')
  sim.setTerminalBehaviour('example.test', 'bob', 0, { answer_after: 1 })
  await waitFor('the register after the reconnection', () => changes.length === 2, 8000)
  t.same(changes[1], { kind: 'register', user: 'bob', domain: 'example.test', expiresInS: 3600 })
  t.notOk((await box.isRegistered('bad user!', 'example.test')).ok, 'a name the command refuses is an error, not "not registered"')
})
