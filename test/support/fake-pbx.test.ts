/**
 * The one fake of FreeSWITCH (test/support/fake-pbx.ts) answers as FreeSWITCH 1.10.12 does where
 * the daemon can tell: unit tests are only as good as it is faithful.
 */
import t from 'tap'
import type { EslApp, EslCommand, FsEvent, InstantCommand } from '../../src/pbx/types.js'
import { ok } from '../../src/util/result.js'
import { FakePbx, flush } from './fake-pbx.js'

const cmd = (text: string) => text as InstantCommand & EslCommand
const app = (name: string, arg = '') => ({ app: name, arg }) as EslApp
const U = '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f'

t.test('api prints -ERR no reply for a command with no output (mod_event_socket.c api_exec); bgapi gives the body as is', async (t) => {
  const pbx = new FakePbx()
  t.same(await pbx.api(cmd('hash select/cod_x/none')), ok('-ERR no reply\n'), 'hash select of no key prints nothing')
  t.same(await pbx.bgapi(cmd('hash select/cod_x/none')), ok(''))
  pbx.reply = () => ok('')
  t.same(await pbx.api(cmd('anything')), ok('-ERR no reply\n'), 'a scripted empty output too')
})

t.test('mod_hash: insert, select, delete; a second delete is not found', async (t) => {
  const pbx = new FakePbx()
  t.same(await pbx.api(cmd('hash insert/cod_x/req.leg/answered NORMAL_CLEARING')), ok('+OK\n'))
  t.same(await pbx.api(cmd('hash select/cod_x/req.leg')), ok('answered NORMAL_CLEARING'))
  t.same(await pbx.api(cmd('hash delete/cod_x/req.leg')), ok('+OK\n'))
  t.same(await pbx.api(cmd('hash delete/cod_x/req.leg')), ok('-ERR Not found\n'))
})

t.test('a channel reported by an event is live until its CHANNEL_DESTROY; then commands on it find no channel', async (t) => {
  const pbx = new FakePbx()
  pbx.emit({ 'Event-Name': 'CHANNEL_CREATE', 'Unique-ID': U, 'Answer-State': 'ringing', variable_cod_domain: 'a.test' })
  t.same(await pbx.api(cmd(`uuid_getvar ${U} cod_domain`)), ok('a.test'))
  t.same(await pbx.api(cmd(`uuid_getvar ${U} unset_var`)), ok('_undef_'))
  t.match(await pbx.api(cmd('show channels as json')), { ok: true, value: /"row_count":1/ })
  pbx.emit({ 'Event-Name': 'CHANNEL_DESTROY', 'Unique-ID': U, 'Answer-State': 'hangup' })
  t.same(await pbx.api(cmd(`uuid_getvar ${U} cod_domain`)), ok('-ERR No such channel!\n'))
  t.same(await pbx.api(cmd(`uuid_kill ${U}`)), ok('-ERR No such channel!\n'))
  t.same(await pbx.api(cmd('show channels as json')), ok('{"row_count": 0}\n'))
})

t.test('uuid_kill: CHANNEL_HANGUP, HANGUP_COMPLETE, DESTROY; the application running on it completes, not fails', async (t) => {
  const pbx = new FakePbx()
  const seen: string[] = []
  pbx.onEvent((e: FsEvent) => seen.push(`${e['Event-Name']} ${e['Hangup-Cause'] ?? ''}`.trim()))
  pbx.park(U, {}, { cod_domain: 'a.test' })
  pbx.script = () => ({ kind: 'hold' })
  const running = pbx.execute(U, app('park')).then((r) => {
    seen.push(`park completed: ${r.ok ? r.value['Event-Name'] : 'failed'}`)
  })
  t.same(await pbx.api(cmd(`uuid_kill ${U} USER_BUSY`)), ok('+OK\n'))
  await running
  await flush()
  t.same(seen, ['CHANNEL_PARK', 'CHANNEL_HANGUP USER_BUSY', 'CHANNEL_HANGUP_COMPLETE USER_BUSY', 'CHANNEL_DESTROY USER_BUSY', 'park completed: CHANNEL_EXECUTE_COMPLETE'])
  t.notOk(pbx.isUp(U))
  t.match(await pbx.execute(U, app('answer')), { ok: false, error: { kind: 'failed', reply: 'invalid session id' } }, 'no application on a gone channel')
})
