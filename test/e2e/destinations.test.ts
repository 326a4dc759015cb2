/**
 * Issue 4, "Done when": each destination kind reached through the simulator, which fetches the
 * dialplan from the daemon's mod_xml_curl endpoint and runs it as FreeSWITCH would
 * (test/fixtures/freeswitch/xml_curl/04-originate-1002-xml-default.txt: the answered leg asks for
 * `<exten> XML <context>`).
 */
import t, { type Test } from 'tap'
import { startHarness, type Harness } from './harness.js'

let h: Harness
t.before(async () => {
  h = await startHarness()
})
t.teardown(async () => h.close())

/** Places call_external to a PSTN target that answers, connected to `destination`; returns the target leg. */
async function connect(t: Test, destination: unknown, via: 'call_external' | 'call_user' = 'call_external') {
  const before = h.callbacks.length
  const body =
    via === 'call_external'
      ? { target: '0399990000', destination, callback_url: h.callbackUrl }
      : { user_name: 'bob', destination, callback_url: h.callbackUrl }
  const reply = await h.post(via, body)
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuids = reply.body['uuids'] as string[]
  await h.waitFor('the callback', () => h.callbacks.length > before)
  const cb = h.callbacks[before]?.body as { result_code: number; uuid: string }
  t.equal(cb.result_code, 0)
  t.ok(uuids.includes(cb.uuid), 'the callback names one of the reply UUIDs')
  return cb.uuid
}

const bridgedPeer = (a: string, namePattern: RegExp) => () =>
  h.daemon.simulator?.liveChannels().find((c) => c.uuid !== a && namePattern.test(c.name) && c.bridgedTo === a)

t.test('a user: the answered leg is bridged to all of the user\'s terminals (bob)', async (t) => {
  const a = await connect(t, 'bob')
  const b = await h.waitFor('bob bridged', bridgedPeer(a, /bob@/))
  t.equal(b.variables['cod_role'], 'destination')
  t.equal(h.daemon.simulator?.liveChannels().find((c) => c.uuid === a)?.variables['cod_dest_kind'], 'user')
  h.daemon.simulator?.remoteHangup(a)
})

t.test('a user by DID (0501231002 is bob)', async (t) => {
  const a = await connect(t, '0501231002')
  await h.waitFor('bob bridged', bridgedPeer(a, /bob@/))
  h.daemon.simulator?.remoteHangup(a)
})

t.test('a group: its members are hunted in order (support: bob first)', async (t) => {
  const a = await connect(t, 'support')
  const b = await h.waitFor('a member bridged', bridgedPeer(a, /bob@/))
  t.equal(b.variables['cod_group_id'], '11')
  h.daemon.simulator?.remoteHangup(a)
})

t.test('a group skips a busy member: sales hunts carol (busy), then alice', async (t) => {
  const a = await connect(t, '2001')
  await h.waitFor('alice bridged', bridgedPeer(a, /alice@/))
  h.daemon.simulator?.remoteHangup(a)
})

t.test('an extension bound to an XML URL parks the call for the IVR runner', async (t) => {
  const a = await connect(t, '3001')
  const apps = await h.waitFor('park', () => {
    const list = h.daemon.simulator?.executedApps(a) ?? []
    return list.some((x) => x.app === 'park') ? list : undefined
  })
  t.notOk(apps.some((x) => x.app === 'answer'), 'the dialplan leaves answering to the IVR runner')
  const set = apps.filter((x) => x.app === 'set' || x.app === 'export').map((x) => x.arg)
  t.ok(set.some((arg) => arg.startsWith('cod_ivr_url=') && arg.includes('ivr.example.test')), 'the document URL travels as a variable')
})

t.test('a PSTN number with a calling number goes out through the domain gateway presenting it', async (t) => {
  const a = await connect(t, { called_number: '0399998888', calling_number: '0501230001' }, 'call_user')
  await h.waitFor('the gateway leg', bridgedPeer(a, /0399998888/))
  const apps = h.daemon.simulator?.executedApps(a) ?? []
  const bridge = apps.findIndex((x) => x.app === 'bridge')
  t.equal(apps[bridge]?.arg, 'sofia/gateway/pstn/0399998888', 'dialed through the domain gateway')
  const presented = apps.findIndex((x) => x.app === 'set' && x.arg === 'effective_caller_id_number=0501230001')
  t.ok(presented >= 0 && presented < bridge, 'the calling number is set before the bridge')
  h.daemon.simulator?.remoteHangup(a)
})

t.test('call_external refuses a PSTN destination and originates nothing', async (t) => {
  const before = h.daemon.simulator?.commands.filter((c) => c.text.includes('originate')).length
  const reply = await h.post('call_external', { target: '0399990000', destination: '0399998888' })
  t.equal(reply.status, 400)
  t.equal((reply.body['error'] as { id: string }).id, 'destination_not_allowed')
  t.equal(h.daemon.simulator?.commands.filter((c) => c.text.includes('originate')).length, before)
})

t.test('auto_answer headers ring only the user\'s legs, not the destination the answered leg is bridged to', async (t) => {
  // FreeSWITCH copies a channel's sip_h_* variables to the legs it bridges to (mod_sofia.c
  // sofia_outgoing_channel) unless sip_copy_custom_headers=false: seen on a real 1.10.12, where
  // bob's phone got alice's auto-answer headers.
  const reply = await h.post('call_user', { user_name: 'alice', destination: 'bob', auto_answer: true, callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const cb = await h.waitFor('the callback', () => h.callbacks.find((c) => (reply.body['uuids'] as string[]).includes((c.body as { uuid?: string }).uuid ?? '')))
  const a = (cb.body as { uuid: string }).uuid
  const alice = h.daemon.simulator?.liveChannels().find((c) => c.uuid === a)
  t.match(alice?.variables['sip_h_Call-Info'], /answer-after=0/, 'the user\'s leg asks to auto-answer')
  const bob = await h.waitFor('bob bridged', bridgedPeer(a, /bob@/))
  t.equal(bob.variables['sip_h_Call-Info'], undefined, 'bob\'s leg does not')
  t.equal(bob.variables['sip_h_Alert-Info'], undefined)
  h.daemon.simulator?.remoteHangup(a)
})
