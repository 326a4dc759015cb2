/**
 * The simulator's sofia registration events and listing against the real switch's
 * (test/fixtures/freeswitch/esl/27-sofia-register-events.txt): a terminal registering fires
 * `sofia::register`, one unregistering `sofia::unregister`, with the sofia headers in the same
 * names and order (the directory variables FreeSWITCH appends after them are left out, see
 * src/sim/calls/registrations.ts); only to sockets that subscribed to those CUSTOM subclasses
 * (mod_event_socket.c event_handler), through their filters; `show registrations as json` has
 * the capture's columns.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { RawEsl, startSim, testDomain, type Msg } from './helpers.js'

const FIXTURE = readFileSync(new URL('../fixtures/freeswitch/esl/27-sofia-register-events.txt', import.meta.url), 'latin1')

/** The plain events of the capture's socket A, each as its ordered header names and values. */
function capturedPlain(): Array<Array<[string, string]>> {
  const out: Array<Array<[string, string]>> = []
  for (const m of FIXTURE.matchAll(/Content-Type: text\/event-plain\n\n([\s\S]*?)\n\n?#### /g)) {
    out.push((m[1] as string).split('\n').filter((l) => l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), decodeURIComponent(l.slice(l.indexOf(': ') + 2))]))
  }
  return out
}

/** The sofia part of an event: the headers after Event-Sequence, up to the directory's variables. */
const sofiaNames = (headers: Array<[string, string]>): string[] => {
  const names = headers.map(([k]) => k)
  const start = names.indexOf('Event-Sequence') + 1
  const end = names.findIndex((n, i) => i >= start && /^(sip_|number_alias|user_name|domain_name|sip-force-user|user_context|effective_|cod_)/.test(n))
  return names.slice(start, end < 0 ? undefined : end)
}

const plainHeaders = (m: Msg): Array<[string, string]> =>
  m.body.split('\n').filter((l) => l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), decodeURIComponent(l.slice(l.indexOf(': ') + 2))])

const isEvent = (m: Msg) => m.headers['Content-Type'] === 'text/event-plain'
const subclassOf = (m: Msg) => plainHeaders(m).find(([k]) => k === 'Event-Subclass')?.[1]

async function subscribed(connect: () => Promise<RawEsl>, command = 'event plain CUSTOM sofia::register sofia::unregister sofia::expire'): Promise<RawEsl> {
  const c = await connect()
  await c.login('ClueCon', '')
  const reply = (await c.command(command)).headers['Reply-Text']
  if (reply !== '+OK event listener enabled plain') throw new Error(`${command}: ${reply ?? ''}`)
  return c
}

t.test('the capture holds a register (twice, the second an update), an unregister and an expire', async (t) => {
  const subs = capturedPlain().map((h) => h.find(([k]) => k === 'Event-Subclass')?.[1])
  t.same(subs, ['sofia::register', 'sofia::register', 'sofia::unregister', 'sofia::register', 'sofia::expire'])
})

t.test('a terminal unregistering and registering again: sofia::unregister, then sofia::register, with the header names of fixture esl/27', async (t) => {
  const { sim, connect } = await startSim(t)
  const c = await subscribed(connect)
  const captured = capturedPlain()
  const realRegister = captured[0] as Array<[string, string]>
  const realUnregister = captured[2] as Array<[string, string]>

  sim.setTerminalBehaviour('example.test', 'bob', 0, { behaviour: 'unregistered' })
  const un = plainHeaders(await c.next(isEvent))
  t.same(un.slice(0, 2).map(([k]) => k), ['Event-Subclass', 'Event-Name'], 'Event-Subclass first, as FreeSWITCH puts it')
  t.same(un.slice(0, 2).map(([, v]) => v), ['sofia::unregister', 'CUSTOM'])
  t.same(sofiaNames(un), sofiaNames(realUnregister), 'the unregister headers of the capture, in its order')
  t.same(un.find(([k]) => k === 'Event-Calling-Function'), ['Event-Calling-Function', 'sofia_reg_handle_register_token'])
  const u = Object.fromEntries(un)
  t.same([u['username'], u['from-host'], u['realm'], u['expires'], u['profile-name']], ['bob', 'example.test', 'example.test', '0', 'internal'])
  t.match(u['contact'], /^"" <sip:bob@127\.0\.0\.1:\d+>$/)
  t.equal((await c.api('sofia_contact */bob@example.test')), 'error/user_not_registered')

  sim.setTerminalBehaviour('example.test', 'bob', 0, { answer_after: 1 })
  const reg = plainHeaders(await c.next(isEvent))
  t.same(sofiaNames(reg), sofiaNames(realRegister), 'the register headers of the capture, in its order')
  const r = Object.fromEntries(reg)
  t.same([r['Event-Subclass'], r['username'], r['realm'], r['status'], r['call-id'] === u['call-id']], ['sofia::register', 'bob', 'example.test', 'Registered(UDP)', true])
  t.ok(Number(r['expires']) > 0, 'expires: seconds')
})

t.test('a reload that adds a terminal and drops another: one event each; a reload that changes nothing: none', async (t) => {
  const { sim, connect } = await startSim(t)
  const c = await subscribed(connect)
  const base = testDomain()
  const users = base.users.map((u) =>
    u.name === 'dave' ? { ...u, sim: { terminals: [{ answer_after: 1 }] } } : u.name === 'carol' ? { ...u, sim: { terminals: [{ behaviour: 'unregistered' as const }] } } : u,
  )
  sim.setDomains([{ ...base, users }])
  const first = await c.next(isEvent)
  const second = await c.next(isEvent)
  const seen = [first, second].map((m) => `${subclassOf(m)} ${Object.fromEntries(plainHeaders(m))['username']}`).sort()
  t.same(seen, ['sofia::register dave', 'sofia::unregister carol'])
  sim.setDomains([{ ...base, users }])
  const probe = await c.api('status')
  t.match(probe, /UP/)
  t.equal(c.messages.filter(isEvent).length, 2, 'nothing fired for an unchanged reload')
})

t.test('CUSTOM subclasses are sent only to sockets that named them, and through their filters (mod_event_socket.c event_handler)', async (t) => {
  const { sim, connect } = await startSim(t)
  const named = await subscribed(connect)
  const bare = await subscribed(connect, 'event plain CUSTOM CHANNEL_CREATE')
  const other = await subscribed(connect, 'event plain CUSTOM conference::maintenance')
  const filtered = await subscribed(connect)
  t.equal((await filtered.command('filter Event-Subclass sofia::register')).headers['Reply-Text'], '+OK filter added. [Event-Subclass]=[sofia::register]')
  const all = await subscribed(connect, 'event plain ALL')
  sim.setTerminalBehaviour('example.test', 'bob', 0, { behaviour: 'unregistered' })
  sim.setTerminalBehaviour('example.test', 'bob', 0, { answer_after: 1 })
  t.equal(subclassOf(await named.next(isEvent)), 'sofia::unregister')
  t.equal(subclassOf(await named.next(isEvent)), 'sofia::register')
  t.equal(subclassOf(await filtered.next(isEvent)), 'sofia::register', 'the filter let only sofia::register through')
  t.equal(subclassOf(await all.next(isEvent)), 'sofia::unregister', 'ALL includes every subclass')
  for (const c of [bare, other, filtered]) await c.api('status')
  t.equal(bare.messages.filter(isEvent).length, 0, 'CUSTOM without subclasses: none of them')
  t.equal(other.messages.filter(isEvent).length, 0, 'another subclass: none')
  t.equal(filtered.messages.filter(isEvent).length, 1)
})

t.test('show registrations as json: one row per user with the columns of fixture esl/27; CSV as in esl/02', async (t) => {
  const { sim, connect } = await startSim(t)
  const c = await connect()
  await c.login('ClueCon', '')
  const real = /\{"row_count":4,"rows":\[(\{[^}]*\})/.exec(FIXTURE)?.[1] ?? '{}'
  const rows = (JSON.parse(await c.api('show registrations as json')) as { row_count: number; rows: Array<Record<string, string>> })
  t.same(Object.keys(rows.rows[0] ?? {}), Object.keys(JSON.parse(real) as object), 'the same columns in the same order')
  t.same(rows.rows.map((r) => r['reg_user']), ['alice', 'bob', 'carol', 'erin'], 'alice once for her two terminals; dave (unregistered) absent')
  t.equal(rows.row_count, 4)
  t.ok(rows.rows.every((r) => r['realm'] === 'example.test' && Number(r['expires']) > Date.now() / 1000), 'expires: a future epoch in seconds')
  const csv = await c.api('show registrations')
  t.match(csv, /^reg_user,realm,token,url,expires,network_ip,network_port,network_proto,hostname,metadata\nalice,example\.test,/)
  t.match(csv, /\n\n4 total\.\n$/)
  for (const u of ['alice', 'bob', 'carol', 'erin']) sim.setTerminalBehaviour('example.test', u, 0, { behaviour: 'unregistered' })
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  t.equal(await c.api('show registrations as json'), '{"row_count": 0}\n', 'none registered: the idle form of esl/01')
})
