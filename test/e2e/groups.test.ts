/**
 * Issue 5 through the HTTP API: call_group hunting and the group context of call_user and
 * initiate_call, seen on the legs FreeSWITCH (the simulator) receives.
 */
import t from 'tap'
import { startHarness, type Harness } from './harness.js'

let h: Harness
t.before(async () => {
  h = await startHarness()
})
t.teardown(async () => h.close())

const legsOf = (uuids: readonly string[]) => h.daemon.simulator?.liveChannels().filter((c) => uuids.includes(c.uuid)) ?? []

t.test('call_group sales: carol is busy, alice answers; UUIDs in hunt order, callback names alice\'s leg', async (t) => {
  const reply = await h.post('call_group', { group_name: 'sales', destination: 'bob', callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuids = reply.body['uuids'] as string[]
  // carol 1 terminal, alice 2, bob 1 (members in the group's order: carol, alice, bob)
  t.equal(uuids.length, 4)
  const cb = await h.waitFor('the callback', () => h.callbacks.find((c) => uuids.includes((c.body as { uuid?: string }).uuid ?? '')))
  const answered = (cb.body as { uuid: string }).uuid
  t.equal(answered, uuids[1], 'alice\'s first terminal (answers after 1 s) won')
  const leg = h.daemon.simulator?.liveChannels().find((c) => c.uuid === answered)
  t.equal(leg?.variables['cod_group_id'], '10')
  t.equal(leg?.variables['cod_operation'], 'call_group')
  t.notOk(legsOf([uuids[3] ?? '']).length, 'bob, never reached, has no leg')
  if (leg !== undefined) h.daemon.simulator?.remoteHangup(leg.uuid)
})

for (const [label, extra, groupId] of [
  ['group_resolver "*": the user\'s first group', { group_resolver: '*' }, '10'],
  ['group_resolver "any:CALL_CENTER"', { group_resolver: 'any:CALL_CENTER' }, '10'],
  ['group_name', { group_name: 'support' }, '11'],
  ['group_extension', { group_extension: '2002' }, '11'],
] as const) {
  t.test(`call_user marks its legs with the group: ${label}`, async (t) => {
    const reply = await h.post('call_user', { user_name: 'bob', destination: 'alice', ...extra })
    t.equal(reply.status, 200, JSON.stringify(reply.body))
    const uuids = reply.body['uuids'] as string[]
    const legs = await h.waitFor('the legs', () => (legsOf(uuids).length === uuids.length ? legsOf(uuids) : undefined))
    for (const leg of legs) t.equal(leg.variables['cod_group_id'], groupId, leg.name)
    for (const leg of legs) h.daemon.simulator?.remoteHangup(leg.uuid)
  })
}

t.test('initiate_call group_name marks the PSTN leg; ani is presented', async (t) => {
  const reply = await h.post('initiate_call', { pstn_number: '0399990001', destination: 'bob', ani: '0501230000', group_name: 'sales' })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuids = reply.body['uuids'] as string[]
  const [leg] = await h.waitFor('the leg', () => (legsOf(uuids).length === 1 ? legsOf(uuids) : undefined))
  t.equal(leg?.variables['cod_group_id'], '10')
  t.equal(leg?.variables['cod_group_name'], 'sales')
  t.equal(leg?.variables['origination_caller_id_number'], '0501230000')
  if (leg !== undefined) h.daemon.simulator?.remoteHangup(leg.uuid)
})

t.test('a resolver that finds no group is group_not_found, nothing originated', async (t) => {
  const before = h.daemon.simulator?.commands.length ?? 0
  const reply = await h.post('call_user', { user_name: 'dave', destination: 'alice', group_resolver: '*' })
  t.equal(reply.status, 404)
  t.equal((reply.body['error'] as { id: string }).id, 'group_not_found')
  t.notOk(h.daemon.simulator?.commands.slice(before).some((c) => c.text.includes('originate')))
})
