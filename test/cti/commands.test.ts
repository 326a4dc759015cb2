/**
 * Commands from clients: hangup, park (with timeout), transfer; refused on channels the
 * connection may not see with the same answer as an unknown uuid; ESL text from pbx/commands.ts.
 */
import t from 'tap'
import { phoneCallCreated, userLegParked } from './fixtures.js'
import { AUTH_A, AUTH_B, DOMAIN_A, DOMAIN_B, open, startHarness, tick } from './helpers.js'
import type { CtiCommands } from '../../src/cti/index.js'
import type { EslCommand } from '../../src/pbx/types.js'
import { ok } from '../../src/util/result.js'

const WS = '/api/ws_cti'
const C = '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f'
const D = '0b6a2c1e-4a5f-4d0e-9c8b-1f2e3d4c5b6a'
const UNKNOWN = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'

t.test('hangup, park and transfer build the documented ESL commands', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  const { client } = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  h.pbx.commands.length = 0
  // About the text sent: FreeSWITCH accepts every command and C stays up (no uuid_kill takes effect).
  h.pbx.reply = () => ok('+OK\n')

  t.same(await client.command({ id: 1, cmd: 'hangup', uuid: C }), { type: 'result', id: 1, cmd: 'hangup', result_code: 0 })
  t.same(await client.command({ id: 'b', cmd: 'hangup', uuid: C, cause: 'USER_BUSY' }), { type: 'result', id: 'b', cmd: 'hangup', result_code: 0 })
  t.same(await client.command({ cmd: 'park', uuid: C }), { type: 'result', cmd: 'park', result_code: 0 }, 'no id: none echoed')
  t.match(await client.command({ id: 3, cmd: 'park', uuid: C, timeout: 30 }), { id: 3, result_code: 0 })
  t.match(await client.command({ id: 4, cmd: 'park', uuid: C, timeout: '45' }), { id: 4, result_code: 0 })
  for (const destination of ['bob', '1002', 'sales', '2001', '3001', '0311112222', '+81311112222']) {
    t.match(await client.command({ id: destination, cmd: 'transfer', uuid: C, destination }), { id: destination, result_code: 0 }, destination)
  }
  t.same(h.pbx.commands, [
    `uuid_setvar ${C} cod_hangup_by api`,
    `uuid_kill ${C} NORMAL_CLEARING`,
    `uuid_setvar ${C} cod_hangup_by api`,
    `uuid_kill ${C} USER_BUSY`,
    `uuid_park ${C}`,
    `uuid_setvar ${C} park_timeout 30`,
    `uuid_park ${C}`,
    `uuid_setvar ${C} park_timeout 45`,
    `uuid_park ${C}`,
    `uuid_transfer ${C} bob XML ${DOMAIN_A}`,
    `uuid_transfer ${C} 1002 XML ${DOMAIN_A}`,
    `uuid_transfer ${C} sales XML ${DOMAIN_A}`,
    `uuid_transfer ${C} 2001 XML ${DOMAIN_A}`,
    `uuid_transfer ${C} 3001 XML ${DOMAIN_A}`,
    `uuid_transfer ${C} 0311112222 XML ${DOMAIN_A}`,
    `uuid_transfer ${C} +81311112222 XML ${DOMAIN_A}`,
  ])
  await client.close()
})

t.test('bad parameters are refused before anything reaches FreeSWITCH', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  const { client } = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  h.pbx.commands.length = 0
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ id: 1, cmd: 'explode', uuid: C }, 'invalid_parameter'],
    [{ id: 2, cmd: 'hangup' }, 'missing_parameter'],
    [{ id: 3, cmd: 'hangup', uuid: 42 }, 'invalid_parameter'],
    [{ id: 4, cmd: 'hangup', uuid: C, cause: 'MANAGER_REQUEST; uuid_kill all' }, 'invalid_parameter'],
    [{ id: 5, cmd: 'hangup', uuid: C, color: 'red' }, 'invalid_parameter'],
    [{ id: 6, cmd: 'park', uuid: C, timeout: 0 }, 'invalid_parameter'],
    [{ id: 7, cmd: 'park', uuid: C, timeout: 3601 }, 'invalid_parameter'],
    [{ id: 8, cmd: 'park', uuid: C, timeout: '30:USER_BUSY' }, 'invalid_parameter'],
    [{ id: 9, cmd: 'transfer', uuid: C }, 'missing_parameter'],
    [{ id: 10, cmd: 'transfer', uuid: C, destination: 'nobody' }, 'destination_not_found'],
    [{ id: 11, cmd: 'transfer', uuid: C, destination: 'eve' }, 'destination_not_found'],
    [{ id: 12, cmd: 'transfer', uuid: C, destination: 'xml_url:https://ivr.example.test/x' }, 'destination_not_allowed'],
    [{ id: 13, cmd: 'transfer', uuid: C, destination: '{name=Jane}0311112222' }, 'invalid_parameter'],
    [{ id: 14, cmd: 'transfer', uuid: C, destination: '1002 XML default' }, 'invalid_parameter'],
    [{ id: 15, cmd: 'transfer', uuid: C, destination: 'bob\nuuid_kill all' }, 'invalid_parameter'],
    [{ id: 16, cmd: 'transfer', uuid: C, destination: { called_number: '0311112222' } }, 'invalid_parameter'],
    [{ id: { nested: true }, cmd: 'hangup', uuid: C }, 'invalid_parameter'],
  ]
  for (const [cmd, id] of cases) {
    const r = await client.command(cmd)
    t.match(r, { type: 'result', result_code: 500, error: { id, description: String } }, `${JSON.stringify(cmd)}: ${id}`)
    if (typeof cmd.id === 'number') t.equal(r.id, cmd.id, 'id echoed')
  }
  client.ws.send('not json')
  t.match(await client.next(), { type: 'result', result_code: 500, error: { id: 'invalid_message' } })
  client.ws.send(Buffer.from('{"cmd":"hangup"}'), { binary: true })
  t.match(await client.next(), { type: 'result', result_code: 500, error: { id: 'invalid_message' } })
  client.ws.send('[1,2]')
  t.match(await client.next(), { type: 'result', result_code: 500, error: { id: 'invalid_message' } })
  t.same(h.pbx.commands, [], 'nothing was sent to FreeSWITCH')
  await client.close()
})

t.test('a channel the connection may not see is answered like an unknown one', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(...phoneCallCreated(D, DOMAIN_B, 'eve', '1001'))
  const alice = await open(h, `${WS}?app_name=crm&user_name=alice`, { authorization: AUTH_A })
  const bob = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })
  const otherDomain = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_B })
  const wallA = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  h.pbx.commands.length = 0

  for (const cmd of ['hangup', 'park', 'transfer']) {
    const extra = cmd === 'transfer' ? { destination: 'bob' } : {}
    const unknown = await wallA.client.command({ id: 1, cmd, uuid: UNKNOWN, ...extra })
    t.match(unknown, { id: 1, cmd, result_code: 500, error: { id: 'channel_not_found' } })
    const sameAnswer = (r: Record<string, unknown>, uuid: string) =>
      t.same(JSON.parse(JSON.stringify(r).split(uuid).join(UNKNOWN)), unknown, `${cmd}: the same answer as for an unknown uuid`)
    sameAnswer(await alice.client.command({ id: 1, cmd, uuid: C, ...extra }), C)
    sameAnswer(await otherDomain.client.command({ id: 1, cmd, uuid: C, ...extra }), C)
    sameAnswer(await wallA.client.command({ id: 1, cmd, uuid: D, ...extra }), D)
  }
  t.same(h.pbx.commands, [], 'nothing was sent to FreeSWITCH')
  // The party may act on it; so may the domain's full_events connection.
  t.match(await bob.client.command({ id: 2, cmd: 'hangup', uuid: C }), { id: 2, result_code: 0 })
  t.match(await otherDomain.client.command({ id: 3, cmd: 'hangup', uuid: D }), { id: 3, result_code: 0 })
  t.same(h.pbx.commands, [`uuid_setvar ${C} cod_hangup_by api`, `uuid_kill ${C} NORMAL_CLEARING`, `uuid_setvar ${D} cod_hangup_by api`, `uuid_kill ${D} NORMAL_CLEARING`])
  for (const c of [alice, bob, otherDomain, wallA]) await c.client.close()
})

t.test('FreeSWITCH answers', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  const { client } = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })

  // The channel ended meanwhile (22-misc-replies: uuid_kill on an unknown uuid).
  h.pbx.reply = () => ok('-ERR No such channel!\n')
  t.match(await client.command({ id: 1, cmd: 'hangup', uuid: C }), { result_code: 500, error: { id: 'channel_not_found' } })
  h.pbx.reply = () => ({ ok: false, error: { kind: 'failed', reply: 'No such channel!' } })
  t.match(await client.command({ id: 2, cmd: 'transfer', uuid: C, destination: 'alice' }), { error: { id: 'channel_not_found' } })
  h.pbx.reply = () => ok('-ERR Cannot park channels that are under control already.\n')
  t.match(await client.command({ id: 3, cmd: 'park', uuid: C }), { error: { id: 'command_failed', description: /under control/ } })
  // A failing uuid_setvar stops the park before uuid_park runs.
  h.pbx.commands.length = 0
  t.match(await client.command({ id: 4, cmd: 'park', uuid: C, timeout: 10 }), { error: { id: 'command_failed' } })
  t.same(h.pbx.commands, [`uuid_setvar ${C} park_timeout 10`])
  h.pbx.reply = () => ({ ok: false, error: { kind: 'timeout' } })
  t.match(await client.command({ id: 5, cmd: 'hangup', uuid: C }), { error: { id: 'pbx_unavailable' } })
  h.pbx.connected = false
  h.pbx.commands.length = 0
  t.match(await client.command({ id: 6, cmd: 'hangup', uuid: C }), { error: { id: 'pbx_unavailable' } })
  t.same(h.pbx.commands, [], 'not even tried while disconnected')
  await client.close()
})

t.test('too many commands in flight on one connection', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  const { client } = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })
  const pending: Array<() => void> = []
  h.pbx.bgapi = (c) => {
    h.pbx.commands.push(c)
    return new Promise((resolve) => pending.push(() => resolve(ok('+OK\n'))))
  }
  for (let i = 0; i < 17; i++) client.ws.send(JSON.stringify({ id: i, cmd: 'hangup', uuid: C }))
  t.match(await client.next(), { type: 'result', id: 16, error: { id: 'too_many_requests' } })
  t.equal(pending.length, 16)
  // A hangup is two commands (cti/esl.ts): the rest are answered at once.
  h.pbx.bgapi = (c) => {
    h.pbx.commands.push(c)
    return Promise.resolve(ok('+OK\n'))
  }
  for (const p of pending) p()
  const ids: unknown[] = []
  for (let i = 0; i < 16; i++) ids.push((await client.next()).id)
  t.same(ids.sort((a, b) => Number(a) - Number(b)), [...Array(16).keys()])
  await client.close()
})

t.test('an injected CtiCommands builds the commands', async (t) => {
  const built: string[] = []
  const cmd = (s: string) => {
    built.push(s)
    return ok(s as EslCommand)
  }
  const commands: CtiCommands = {
    hangup: (uuid, cause) => ok([cmd(`kill ${uuid} ${cause}`).value]),
    transfer: (uuid, ext, ctx) => cmd(`xfer ${uuid} ${ext} ${ctx}`),
    park: (uuid, timeout) => ok([cmd(`park ${uuid} ${String(timeout)}`).value]),
  }
  const h = await startHarness({ commands })
  t.teardown(h.close)
  await tick()
  h.pbx.emit(...userLegParked(C, DOMAIN_A, '2', 'bob'))
  const { client } = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })
  await client.command({ cmd: 'park', uuid: C, timeout: 5 })
  await client.command({ cmd: 'transfer', uuid: C, destination: 'alice' })
  t.same(built, [`park ${C} 5`, `xfer ${C} alice ${DOMAIN_A}`])
  // The re-read of the live channels at start is the channel model's, not CTI's.
  t.same(h.pbx.commands, ['show channels as json', ...built])
  await client.close()
})

t.test('a frame larger than 16 KiB closes the connection (1009)', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  const { client } = await open(h, `${WS}?app_name=crm&user_name=bob`, { authorization: AUTH_A })
  client.ws.send(JSON.stringify({ cmd: 'hangup', uuid: C, pad: 'x'.repeat(17 * 1024) }))
  t.equal(await client.closed, 1009)
  t.same(h.pbx.commands, ['show channels as json'])
})
