/**
 * The ticket policy (src/cti/policy.ts, docs/cti.md "Ticket policy"): a browser (ticket)
 * connection acts only on its own user's legs and those connected to them that belong to no
 * other user, and transfers only inside its domain (PSTN with CTI_PSTN_TRANSFER_ALLOWED);
 * refusals are `permission_denied`, distinct from `channel_not_found`. Token connections keep
 * their powers.
 */
import t from 'tap'
import { callExternalUntilBridged, ev, phoneCallCreated, T0_MS, userLegParked } from './fixtures.js'
import { A, B, BOB, call, PHONE, WS } from './scene.js'
import { AUTH_A, DOMAIN_A, genTicket, open, startHarness, type Harness } from './helpers.js'
import { domainSchema } from '../../src/config/schema.js'
import { DomainDirectory } from '../../src/directory/directory.js'
import type { ChannelRecord } from '../../src/channels/index.js'
import { mayActOn, mayTransferTo } from '../../src/cti/policy.js'


/** Alice's browser: a ticket for `user_name=alice`, redeemed. */
async function aliceByTicket(h: Harness) {
  const uri = `${WS}?app_name=crm&user_name=alice`
  const gen = await genTicket(h, uri)
  if (typeof gen.body.ticket !== 'string') throw new Error(`no ticket: ${JSON.stringify(gen.body)}`)
  return (await open(h, `${uri}&ticket=${gen.body.ticket}`)).client
}

t.test('a ticket connection: own legs and the caller connected to them, internal transfers only', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  // The API's PSTN leg A bridged to alice's leg B; alice's phone calls bob (PHONE bridged to BOB).
  h.pbx.emit(...callExternalUntilBridged(call))
  h.pbx.emit(...phoneCallCreated(PHONE, DOMAIN_A, 'alice', '1002'), ...userLegParked(BOB, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(ev('CHANNEL_BRIDGE', PHONE, T0_MS + 5000, { 'Bridge-A-Unique-ID': PHONE, 'Bridge-B-Unique-ID': BOB, 'Other-Leg-Unique-ID': BOB, variable_domain_name: DOMAIN_A }))
  const client = await aliceByTicket(h)
  h.pbx.commands.length = 0

  // Allowed: the caller (no user of its own, connected to alice) to users, groups, extensions.
  for (const destination of ['bob', '1002', 'sales', '2001', '3001']) {
    t.match(await client.command({ id: destination, cmd: 'transfer', uuid: A, destination }), { result_code: 0 }, `transfer to ${destination}`)
  }
  t.match(await client.command({ id: 'park-own', cmd: 'park', uuid: B }), { result_code: 0 }, 'her own leg')
  t.match(await client.command({ id: 'hangup-own', cmd: 'hangup', uuid: PHONE }), { result_code: 0 }, 'her phone leg')

  // Refused by policy: PSTN without the privilege, bob's leg even though it is bridged to her.
  const sent = h.pbx.commands.length
  for (const destination of ['0311112222', '+81311112222']) {
    t.match(
      await client.command({ id: destination, cmd: 'transfer', uuid: A, destination }),
      { result_code: 500, error: { id: 'permission_denied', description: /CTI_PSTN_TRANSFER_ALLOWED/ } },
      `PSTN ${destination}`,
    )
  }
  for (const cmd of [{ cmd: 'hangup' }, { cmd: 'park' }, { cmd: 'transfer', destination: 'sales' }]) {
    t.match(await client.command({ ...cmd, uuid: BOB }), { result_code: 500, error: { id: 'permission_denied' } }, `${cmd.cmd} of bob's leg`)
  }
  // Not visible stays channel_not_found (nothing learnt), a failure of FreeSWITCH stays command_failed.
  t.match(await client.command({ cmd: 'hangup', uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' }), { error: { id: 'channel_not_found' } })
  t.equal(h.pbx.commands.length, sent, 'no refused command reached FreeSWITCH')
  h.pbx.reply = () => ({ ok: true, value: '-ERR Cannot park channels that are under control already.\n' })
  t.match(await client.command({ cmd: 'park', uuid: B }), { error: { id: 'command_failed' } })
  await client.close()
})

t.test('token connections keep their powers: PSTN transfers and other users\' legs', async (t) => {
  const h = await startHarness()
  t.teardown(h.close)
  h.pbx.emit(...phoneCallCreated(PHONE, DOMAIN_A, 'alice', '1002'), ...userLegParked(BOB, DOMAIN_A, '2', 'bob'))
  h.pbx.emit(ev('CHANNEL_BRIDGE', PHONE, T0_MS + 5000, { 'Bridge-A-Unique-ID': PHONE, 'Bridge-B-Unique-ID': BOB, 'Other-Leg-Unique-ID': BOB, variable_domain_name: DOMAIN_A }))
  const { client: user } = await open(h, `${WS}?app_name=crm&user_name=alice`, { authorization: AUTH_A })
  t.match(await user.command({ cmd: 'transfer', uuid: BOB, destination: '0311112222' }), { result_code: 0 }, 'user-scoped token connection')
  const { client: wall } = await open(h, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_A })
  t.match(await wall.command({ cmd: 'transfer', uuid: BOB, destination: '+81311112222' }), { result_code: 0 }, 'full_events connection')
  await user.close()
  await wall.close()
})

t.test('the rules on their own', async (t) => {
  const base = { name: 'priv.test', api_tokens: ['token-of-priv-test-domain'], channel_limit: 1, gateway: 'pstn' }
  const plain = new DomainDirectory(domainSchema.parse(base))
  const privileged = new DomainDirectory(domainSchema.parse({ ...base, privileges: ['CTI_PSTN_TRANSFER_ALLOWED'] }))
  const pstn = { kind: 'pstn', number: '0311112222' } as const
  t.match(mayTransferTo(pstn, 'ticket', plain), { ok: false, error: { id: 'permission_denied' } })
  t.same(mayTransferTo(pstn, 'ticket', privileged), { ok: true, value: undefined }, 'the privilege allows PSTN')
  t.same(mayTransferTo(pstn, 'token', plain), { ok: true, value: undefined })
  t.match(mayTransferTo({ kind: 'ivr', source: { kind: 'url', url: 'https://x.test/' } } as never, 'ticket', privileged), { ok: false, error: { id: 'permission_denied' } })
  t.throws(() => domainSchema.parse({ ...base, privileges: ['CTI_PSTN_TRANSFER'] }), 'an unknown privilege is refused')

  const leg = (userId: string | undefined) => ({ userId }) as ChannelRecord
  t.same(mayActOn(leg('1'), 'ticket', '1'), { ok: true, value: undefined }, 'own leg')
  t.same(mayActOn(leg(undefined), 'ticket', '1'), { ok: true, value: undefined }, 'a leg of no user (visibility said it is connected)')
  t.match(mayActOn(leg('2'), 'ticket', '1'), { ok: false, error: { id: 'permission_denied' } }, "another user's leg")
  t.same(mayActOn(leg('2'), 'token', '1'), { ok: true, value: undefined })
  t.same(mayActOn(leg('2'), 'token', undefined), { ok: true, value: undefined })
})
