/**
 * The event socket protocol, byte for byte as in the captures (sessions 01, 04, 05, 08, 22 in
 * test/fixtures/freeswitch/esl/) and
 * mod_event_socket.c parse_command.
 */
import t from 'tap'
import { RawEsl, startSim, STANDARD_EVENTS, sleep } from './helpers.js'

const NOTICE = 'Content-Type: text/disconnect-notice\nContent-Length: 67\n\nDisconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n'
const reply = (text: string): string => `Content-Type: command/reply\nReply-Text: ${text}\n\n`
const apiBytes = (body: string): string => `Content-Type: api/response\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`

t.test('the server speaks first; auth accepted (fixture esl/01-session-basics)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.next()
  t.equal(c.raw.toString(), 'Content-Type: auth/request\n\n')
  const m = await c.command('auth ClueCon')
  t.equal(m.raw, reply('+OK accepted'))
})

t.test('a wrong password: -ERR invalid, the disconnect notice, then the socket closes (fixture esl/04-auth-wrong-password)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.next()
  c.send('auth WrongPass\n\n')
  await c.next()
  await c.next()
  await new Promise<void>((r) => (c.closed ? r() : c.socket.once('close', () => r())))
  t.equal(c.raw.toString(), `Content-Type: auth/request\n\n${reply('-ERR invalid')}${NOTICE}`)
  t.equal(Buffer.byteLength(reply('-ERR invalid') + NOTICE), 178, 'the 178 bytes of fixture esl/04-auth-wrong-password')
})

t.test('commands before auth get -ERR command not found and the socket stays usable (fixture esl/05-command-before-auth)', async (t) => {
  const { connect, sim } = await startSim(t)
  const c = await connect()
  await c.next()
  t.equal((await c.command('api status')).raw, reply('-ERR command not found'))
  t.equal((await c.command('event json ALL')).raw, reply('-ERR command not found'))
  t.equal((await c.command('auth ClueCon')).raw, reply('+OK accepted'))
  t.same(
    sim.commands.map((x) => x.text),
    ['api status', 'event json ALL', 'auth ClueCon'],
    'every command line is recorded verbatim',
  )
})

t.test('exit: +OK bye, the notice, then FIN (fixture esl/01-session-basics)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const before = c.raw.length
  c.send('exit\n\n')
  await new Promise<void>((r) => (c.closed ? r() : c.socket.once('close', () => r())))
  t.equal(c.raw.subarray(before).toString(), reply('+OK bye') + NOTICE)
})

t.test('reply texts of fixture esl/22-misc-replies', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login('ClueCon', '')
  t.equal((await c.command(`event json ${STANDARD_EVENTS}`)).raw, reply('+OK event listener enabled json'))
  t.equal((await c.command('api foo')).raw, apiBytes('-ERR foo Command not found!\n'))
  t.equal((await c.command('foo')).raw, reply('-ERR command not found'))
  const x1 = 'e29e9e14-0570-4ee8-bc7b-5abf9553f30a'
  const x2 = 'f37238e2-b086-4754-84b9-a088301cf20d'
  t.equal(await c.api(`uuid_kill ${x1}`), '-ERR No such channel!\n')
  t.equal(await c.api(`uuid_bridge ${x1} ${x2}`), '-ERR Invalid uuid\n')
  t.equal((await c.command(`api uuid_exists ${x1}`)).raw, apiBytes('false'), 'no trailing newline')
  t.equal(await c.api(`uuid_transfer ${x1} 1002 XML default`), '-ERR No such channel!\n')
  t.equal(await c.api('hupall NORMAL_CLEARING my_request_id nobody'), '+OK hangup all channels matching [my_request_id]=[nobody] with cause: NORMAL_CLEARING\n')
  t.equal((await c.command('event json BOGUS_EVENT')).raw, reply('-ERR no keywords supplied'))
  t.equal((await c.command('filter Unique-ID x')).raw, reply('+OK filter added. [Unique-ID]=[x]'))
  t.equal((await c.command('filter delete Unique-ID x')).raw, reply('+OK filter deleted. [Unique-ID][x]'))
  t.equal((await c.command('noevents')).raw, reply('+OK no longer listening for events'))
  t.equal((await c.command('noevents')).raw, reply('-ERR not listening for events'))
  t.equal((await c.command(`sendmsg ${x1}\ncall-command: hangup`)).raw, reply(`-ERR invalid session id [${x1}]`))
  t.equal(await c.api(`uuid_getvar ${x1} foo`), '-ERR No such channel!\n')
  t.equal(await c.api('uuid_kill'), '-USAGE: <uuid> [cause]\n')
  t.equal(await c.api('originate'), '-USAGE: <call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] [<cid_name>] [<cid_num>] [<timeout_sec>]\n')
  t.equal(await c.api('global_getvar no_such_var'), '-ERR no reply\n', 'api_exec turns an empty reply into -ERR no reply')
})

t.test('sofia_contact: registered terminals comma-joined, no trailing newline (fixtures esl/01-session-basics, 16-sofia-contact-not-registered)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const both = 'sofia/internal/sip:alice@127.0.0.1:5070,sofia/internal/sip:alice@127.0.0.1:5071'
  t.equal((await c.command('api sofia_contact */alice@example.test')).raw, apiBytes(both))
  t.equal(await c.api('sofia_contact */1001@example.test'), both, 'the extension works as a number-alias')
  t.equal(await c.api('sofia_contact */dave@example.test'), 'error/user_not_registered', 'an unregistered terminal is no contact')
  t.equal(await c.api('sofia_contact */nobody@example.test'), 'error/user_not_registered')
  t.equal(await c.api('sofia_contact */alice@other.test'), 'error/user_not_registered', 'scoped by domain')
})

t.test('show channels as json when idle (fixture esl/03-show-channels-live-call)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  t.equal((await c.command('api show channels as json')).raw, apiBytes('{"row_count": 0}\n'))
  t.equal(await c.api('show calls as json'), '{"row_count": 0}\n')
})

t.test('bgapi honours the Job-UUID header and fires BACKGROUND_JOB (fixture esl/22-misc-replies)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const job = 'ed44bff4-4169-4bcc-ad7f-853aa47ff471'
  const m = await c.command(`bgapi status\nJob-UUID: ${job}`)
  t.equal(m.raw, `Content-Type: command/reply\nReply-Text: +OK Job-UUID: ${job}\nJob-UUID: ${job}\n\n`)
  const ev = await c.event((e) => e['Event-Name'] === 'BACKGROUND_JOB')
  t.equal(ev['Job-UUID'], job)
  t.equal(ev['Job-Command'], 'status')
  t.notOk('Job-Command-Arg' in ev, 'no argument, no Job-Command-Arg')
  t.match(String(ev['_body']), /^UP 0 years, .*\nFreeSWITCH \(Version 1\.10\.12-release {2}64bit\) is ready\n/s)
  t.equal(ev['Content-Length'], String(Buffer.byteLength(String(ev['_body']))))
  t.equal(ev['Event-Calling-Function'], 'api_exec')
  const lower = await c.command('bgapi originate error/user_busy &park()\njob-uuid: lower-case-header-works')
  t.equal(lower.headers['Job-UUID'], 'lower-case-header-works')
  const busy = await c.event((e) => e['Job-UUID'] === 'lower-case-header-works')
  t.equal(busy['_body'], '-ERR USER_BUSY\n', 'error/user_busy: no channel (fixture esl/22-misc-replies)')
  t.equal(busy['Job-Command-Arg'], 'error/user_busy &park()')
})

t.test('a command split over many TCP chunks, CRLF line ends and leading blank lines', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.next()
  for (const ch of '\n\nauth ClueCon\r\n\r\n') {
    c.send(ch)
    await sleep(1)
  }
  t.equal((await c.next()).raw, reply('+OK accepted'))
  c.send('api uuid_exi')
  await sleep(5)
  c.send('sts x\n')
  await sleep(5)
  c.send('\napi uuid_exists y\n\n')
  t.equal((await c.next()).body, 'false')
  t.equal((await c.next()).body, 'false', 'two commands in one chunk')
})

t.test('sendmsg with a Content-Length body (esl-lite execute_uuid)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const r = await c.command('bgapi originate {origination_uuid=aaaaaaaa-0000-4000-8000-000000000001}sofia/internal/sip:alice@127.0.0.1:5070 &park()')
  t.match(r.headers['Reply-Text'], /^\+OK Job-UUID: /)
  await c.event((e) => e['Event-Name'] === 'CHANNEL_PARK')
  const body = 'my_var=hello world'
  c.send(
    `sendmsg aaaaaaaa-0000-4000-8000-000000000001\ncall-command: execute\nexecute-app-name: set\nevent-uuid: app-1\nContent-Type: text/plain\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`,
  )
  const ok = await c.next((m) => m.headers['Content-Type'] === 'command/reply')
  t.equal(ok.raw, reply('+OK'))
  const done = await c.event((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE' && e['Application'] === 'set')
  t.equal(done['Application-UUID'], 'app-1', 'event-uuid becomes Application-UUID')
  t.equal(done['Application-Data'], body)
  t.equal(done['variable_my_var'], 'hello world')
  t.equal(await c.api('uuid_getvar aaaaaaaa-0000-4000-8000-000000000001 my_var'), 'hello world')
  t.equal(await c.api('uuid_getvar aaaaaaaa-0000-4000-8000-000000000001 nope'), '_undef_')
  c.send('sendmsg aaaaaaaa-0000-4000-8000-000000000001\ncall-command: hangup\nhangup-cause: USER_BUSY\n\n')
  const h = await c.event((e) => e['Event-Name'] === 'CHANNEL_HANGUP')
  t.equal(h['Hangup-Cause'], 'USER_BUSY')
  await c.event((e) => e['Event-Name'] === 'CHANNEL_DESTROY')
})

t.test('event plain: url-encoded values, BACKGROUND_JOB body after its own Content-Length (fixture esl/08-originate-user-form-event-plain)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login('ClueCon', '')
  t.equal((await c.command('event plain BACKGROUND_JOB')).raw, reply('+OK event listener enabled plain'))
  await c.command('bgapi originate {a=1}error/user_not_registered &park()\nJob-UUID: j-plain')
  const m = await c.next((x) => x.headers['Content-Type'] === 'text/event-plain')
  t.match(m.body, /^Event-Name: BACKGROUND_JOB\nCore-UUID: [0-9a-f-]{36}\n/)
  t.match(m.body, /\nEvent-Date-GMT: [A-Z][a-z]{2},%20\d\d%20/, 'the date is url-encoded, the comma kept')
  t.match(m.body, /\nJob-Command-Arg: %7Ba%3D1%7Derror\/user_not_registered%20%26park\(\)\nContent-Length: 25\n\n-ERR USER_NOT_REGISTERED\n$/)
  t.equal(Number(m.headers['Content-Length']), Buffer.byteLength(m.body))
})

t.test('filters: only matching events pass (mod_event_socket event_handler)', async (t) => {
  const { connect } = await startSim(t)
  const c = await connect()
  await c.login()
  const carol = await c.api('sofia_contact */carol@example.test')
  await c.command('filter Event-Name BACKGROUND_JOB')
  await c.command(`bgapi originate {origination_uuid=aaaaaaaa-0000-4000-8000-000000000002}${carol} &park()`)
  const job = await c.event((e) => e['Event-Name'] === 'BACKGROUND_JOB')
  t.equal(job['_body'], '-ERR USER_BUSY\n')
  await sleep(50)
  t.same(
    c.events().map((e) => e['Event-Name']),
    ['BACKGROUND_JOB'],
    'the channel events were filtered out',
  )
})

t.test('dropConnections destroys sockets; a new connection works', async (t) => {
  const { sim, connect } = await startSim(t)
  const a = await connect()
  await a.login()
  sim.dropConnections()
  await new Promise<void>((r) => (a.closed ? r() : a.socket.once('close', () => r())))
  t.ok(a.closed)
  const b = await connect()
  await b.login()
  t.equal(await b.api('uuid_exists x'), 'false')
})

t.test('a raw client that never authenticates receives no events', async (t) => {
  const { port, connect } = await startSim(t)
  const watcher = await RawEsl.connect(port)
  t.teardown(() => watcher.close())
  const c = await connect()
  await c.login()
  await c.command('bgapi originate error/user_busy &park()')
  await c.event((e) => e['Event-Name'] === 'BACKGROUND_JOB')
  await sleep(20)
  t.equal(watcher.messages.length, 1, 'only the auth/request')
})
