/**
 * The legs' own records (src/pbx/leg-record.ts): the command text pbx/commands.ts writes for them,
 * every refusal of a bad realm or key, the parsing of what `hash select` returns, and the
 * simulator running them as FreeSWITCH does (mod_hash.c hash_api_function; switch_channel.c
 * switch_channel_api_on for `api_on_answer`; switch_core_state_machine.c api_hook for
 * `api_hangup_hook`, its argument expanded at hangup).
 */
import t from 'tap'
import * as commands from '../../src/pbx/commands.js'
import { legRecordSlot, parseLegRecord } from '../../src/pbx/leg-record.js'
import { connectPbx } from '../../src/pbx/connection.js'
import type { EslCommand } from '../../src/pbx/types.js'
import { Simulator } from '../../src/sim/index.js'
import type { DomainConfig } from '../../src/config/schema.js'
import { silentLogger } from '../../src/util/logger.js'
import { withoutOwnRecords } from '../pbx/fs-model.js'

const UUID = '0c882a51-d28a-43c6-9fe9-0991d369605c'
const REQ = '7f035229-6186-45e0-b5a6-7419e1e380d0'

t.test('the slot of a leg: realm cod_<domain>, key <request>.<uuid>, lower case', async (t) => {
  t.same(legRecordSlot('Example.COM', REQ, UUID.toUpperCase()), { realm: 'cod_example.com', key: `${REQ}.${UUID}` })
})

t.test('originate: every leg with a record carries its quoted api_on_answer and api_hangup_hook, past the ${ check', async (t) => {
  const slot = legRecordSlot('example.com', REQ, UUID)
  const cmd = commands.originate({
    legs: [{ uuid: UUID, endpoint: { kind: 'gateway', gateway: 'gw', number: '0501230000' }, record: slot }],
    timeoutSec: 30,
    target: { kind: 'park' },
  })
  t.ok(cmd.ok)
  if (!cmd.ok) return
  t.equal(
    cmd.value,
    `originate {cod_leg_records=origination_nested_vars=true,originate_timeout=30,ignore_early_media=true}` +
      `[origination_uuid=${UUID},api_on_answer='hash insert/cod_example.com/${REQ}.${UUID}/answered',` +
      `api_hangup_hook='hash insert/cod_example.com/${REQ}.${UUID}/\${hangup_cause}:\${answer_epoch}']sofia/gateway/gw/0501230000 &park()`,
  )
  // FreeSWITCH 1.10.12 refuses a `{}` or `[]` value holding `${` ("Invalid data (${api_hangup_hook}
  // contains a variable)") unless that text is in the dial string; without records, neither is.
  const bare = commands.originate({ legs: [{ uuid: UUID, endpoint: { kind: 'gateway', gateway: 'gw', number: '0501230000' } }], timeoutSec: 30, target: { kind: 'park' } })
  t.ok(bare.ok && !bare.value.includes('$') && !bare.value.includes('origination_nested_vars'), 'no record: no expansion, the check stays on')
})

t.test('the wire tests take out the daemon\'s own records only (test/pbx/fs-model.ts withoutOwnRecords)', async (t) => {
  const OTHER = '26106cbc-9dce-4f72-8987-7e5e09dc0bef'
  const cmd = commands.originate({
    legs: [UUID, OTHER].map((uuid) => ({ uuid, endpoint: { kind: 'gateway' as const, gateway: 'gw', number: '0501230000' }, record: legRecordSlot('example.com', REQ, uuid) })),
    timeoutSec: 30,
    target: { kind: 'park' },
  })
  if (!cmd.ok) throw new Error('builder')
  const text = `bgapi ${cmd.value}`
  const left = withoutOwnRecords(text)
  t.notOk(left.includes('$') || left.includes('nested_vars'), 'both legs\' hooks and the flag go')
  t.match(left, `[origination_uuid=${OTHER},api_on_answer='hash insert/cod_example.com/${REQ}.${OTHER}/answered']sofia/`, 'the rest of the leg stays')
  const hook = (key: string) => `api_hangup_hook='hash insert/cod_example.com/${REQ}.${key}/\${hangup_cause}:\${answer_epoch}'`
  for (const [why, bad] of [
    ['a hook keyed on another leg', text.replace(hook(OTHER), hook(UUID))],
    ['a hook with more in it', text.replace(hook(UUID), hook(UUID).replace(':${answer_epoch}', ':${system(id)}'))],
    ['another ${ beside the hooks', text.replace('ignore_early_media=true', 'ignore_early_media=${x}')],
    ['a hook that is not its leg\'s last variable', text.replace(`${hook(UUID)}]`, `${hook(UUID)},x=1]`)],
  ] as const) {
    t.not(bad, text, `${why}: the forgery differs`)
    t.ok(withoutOwnRecords(bad).includes('$'), `${why}: a $ is left for the wire tests to see`)
  }
  const flagOnly = text.replace(/,api_hangup_hook='[^']*'/g, '')
  t.equal(withoutOwnRecords(flagOnly), flagOnly, 'the flag without any hook stays')
})

t.test('bad realms and keys are refused, never written', async (t) => {
  const leg = (realm: string, key: string) =>
    commands.originate({ legs: [{ uuid: UUID, endpoint: { kind: 'user', user: 'ann', domain: 'example.com' }, record: { realm, key } }], timeoutSec: 30, target: { kind: 'park' } })
  for (const [realm, key, why] of [
    ['cod_x', 'a/b', 'a slash would shift hash_api_function argv'],
    ['cod/x', 'k', 'slash in the realm'],
    ['cod_x', 'k ${api(system x)}', 'an expansion'],
    ['cod_x', "k'", 'a quote'],
    ['cod_x', 'k,x=y', 'a comma would add a variable'],
    ['', 'k', 'empty realm'],
    ['cod_x', '', 'empty key'],
  ] as const) {
    const r = leg(realm, key)
    t.notOk(r.ok, why)
    t.notOk(commands.hashSelect({ realm, key }).ok, `hash select: ${why}`)
    t.notOk(commands.hashDelete({ realm, key }).ok, `hash delete: ${why}`)
  }
})

t.test('a caller may not set the hook variables itself', async (t) => {
  for (const name of ['api_on_answer', 'api_hangup_hook', 'API_HANGUP_HOOK', 'api_reporting_hook', 'session_in_hangup_hook']) {
    const r = commands.originate({ legs: [{ uuid: UUID, endpoint: { kind: 'user', user: 'ann', domain: 'example.com' } }], vars: { [name]: 'x' }, timeoutSec: 30, target: { kind: 'park' } })
    t.notOk(r.ok, name)
  }
})

t.test('select and delete: exact text', async (t) => {
  const slot = { realm: 'cod_example.com', key: `${REQ}.${UUID}` }
  t.same(commands.hashSelect(slot), { ok: true, value: `hash select/cod_example.com/${REQ}.${UUID}` })
  t.same(commands.hashDelete(slot), { ok: true, value: `hash delete/cod_example.com/${REQ}.${UUID}` })
})

t.test('parseLegRecord', async (t) => {
  t.same(parseLegRecord('answered'), { kind: 'answered', cause: undefined })
  t.same(parseLegRecord('NORMAL_CLEARING:1795514477\n'), { kind: 'answered', cause: 'NORMAL_CLEARING' })
  t.same(parseLegRecord('USER_BUSY:0'), { kind: 'failed', cause: 'USER_BUSY' })
  t.same(parseLegRecord('NO_ANSWER:'), { kind: 'failed', cause: 'NO_ANSWER' })
  for (const bad of ['', '-ERR Not found', 'busy:0', 'USER_BUSY', 'USER_BUSY:x', '${hangup_cause}:${answer_epoch}']) t.equal(parseLegRecord(bad), undefined, JSON.stringify(bad))
})

const domain = {
  name: 'rec.test',
  api_tokens: ['rec-token-0123456789'],
  channel_limit: 10,
  calling_numbers: [],
  users: [
    { id: '1', name: 'quick', extension: '1001', password: 'quick-sip-secret', sim: { terminals: [{ answer_after: 0.1, hangup_after: 0.2 }] } },
    { id: '2', name: 'busy', extension: '1002', password: 'busy-sip-secret', sim: { terminals: [{ behaviour: 'busy' }] } },
  ],
  groups: [],
} as unknown as DomainConfig

t.test('simulator: hash API replies, api_on_answer and api_hangup_hook run as FreeSWITCH runs them', async (t) => {
  const sim = new Simulator({ domains: [domain], password: 'ClueCon' })
  const port = await sim.listen(0)
  t.teardown(() => sim.close())
  const pbx = connectPbx({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(() => pbx.close())
  const deadline = Date.now() + 5000
  while (!pbx.isConnected() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  // Test-only: raw command text, as another ESL client would send it (the brand guards the daemon's code).
  const api = async (cmd: string): Promise<string> => {
    const r = await pbx.bgapi(cmd as EslCommand, 2000)
    return r.ok ? r.value : `failed: ${r.error.kind}`
  }
  const slot = { realm: 'cod_rec.test', key: 'k1' }
  const sel = commands.hashSelect(slot)
  const del = commands.hashDelete(slot)
  if (!sel.ok || !del.ok) throw new Error('builder')
  t.equal(await api(sel.value), '', 'nothing yet: an empty reply')
  t.equal(await api(del.value), '-ERR Not found\n')
  t.equal(await api('hash insert/cod_rec.test/k1/v/with/slashes'), '+OK\n', 'the 4th part keeps its slashes')
  t.equal(await api(sel.value), 'v/with/slashes')
  t.equal(await api(del.value), '+OK\n')
  t.match(await api('hash insert/cod_rec.test'), /^-ERR Usage: hash/)

  // Two real legs: one answers then hangs up, one is refused busy.
  for (const [user, uuid] of [['quick', UUID], ['busy', '26106cbc-9dce-4f72-8987-7e5e09dc0bef']] as const) {
    const rec = legRecordSlot('rec.test', REQ, uuid)
    const contact = await api(`sofia_contact */${user}@rec.test`)
    const cmd = commands.originate({ legs: [{ uuid, endpoint: { kind: 'contact', contact: contact.trim() }, record: rec }], timeoutSec: 5, target: { kind: 'park' } })
    if (!cmd.ok) throw new Error('builder')
    await pbx.bgapi(cmd.value, 5000)
  }
  const read = async (uuid: string) => {
    const c = commands.hashSelect(legRecordSlot('rec.test', REQ, uuid))
    return c.ok ? api(c.value) : ''
  }
  const until = Date.now() + 5000
  while (sim.liveChannels().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
  t.match(await read(UUID), /^NORMAL_CLEARING:[1-9][0-9]*$/, 'answered, then hung up: its cause and a non-zero answer_epoch')
  t.equal(await read('26106cbc-9dce-4f72-8987-7e5e09dc0bef'), 'USER_BUSY:0', 'refused: its cause, never answered')
})
