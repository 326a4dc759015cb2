import t from 'tap'
import { parseJobBody, parseShowChannels, parseSofiaContacts, rowAnswered } from '../../src/pbx/replies.js'

t.test('job bodies (fixtures esl/06, 10, 14, 17)', async (t) => {
  t.same(parseJobBody('+OK 5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f\n'), { ok: true, text: '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f' })
  t.same(parseJobBody('-ERR NO_ANSWER\n'), { ok: false, reason: 'NO_ANSWER' })
  t.same(parseJobBody('-ERR USER_NOT_REGISTERED\n'), { ok: false, reason: 'USER_NOT_REGISTERED' })
  t.same(parseJobBody('sofia/internal/sip:1001@127.0.0.1:5071'), { ok: true, text: 'sofia/internal/sip:1001@127.0.0.1:5071' })
})

t.test('sofia_contact output (fixtures esl/01-session-basics, 16-sofia-contact-not-registered)', async (t) => {
  t.same(parseSofiaContacts('error/user_not_registered'), { kind: 'not_registered' })
  t.same(parseSofiaContacts(''), { kind: 'not_registered' })
  t.same(parseSofiaContacts('sofia/internal/sip:1001@127.0.0.1:5071'), {
    kind: 'contacts',
    contacts: ['sofia/internal/sip:1001@127.0.0.1:5071'],
    refused: [],
  })
  const two = parseSofiaContacts('sofia/internal/sip:1001@127.0.0.1:5071,sofia/internal/sip:1001@127.0.0.1:5081;fs_nat=yes')
  t.same(two.kind === 'contacts' ? two.contacts.length : 0, 2)
  // A phone chooses its own Contact: whatever leaves the safe alphabet is never dialled.
  const hostile = parseSofiaContacts("sofia/internal/sip:x@h:5060;a={b},sofia/internal/sip:y@h'|x,sofia/internal/sip:z@h:_:w,sofia/internal/sip:ok@h")
  t.same(hostile, { kind: 'contacts', contacts: ['sofia/internal/sip:ok@h'], refused: ['sofia/internal/sip:x@h:5060;a={b}', "sofia/internal/sip:y@h'|x", 'sofia/internal/sip:z@h:_:w'] })
})

t.test('show channels as json (fixture esl/03-show-channels-live-call)', async (t) => {
  t.same(parseShowChannels('{"row_count": 0}\n'), { ok: true, value: [] })
  const body =
    '{"row_count":1,"rows":[{"uuid":"5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f","direction":"outbound","created":"2026-11-22 06:08:00","state":"CS_EXECUTE","presence_id":"1001@example.test","callstate":"ACTIVE","context":"default"}]}'
  const r = parseShowChannels(body)
  if (!r.ok) return t.fail(r.error)
  t.equal(r.value[0]?.uuid, '5b65cbfb-8a4b-4053-a7ea-ac0c205fdc6f')
  t.equal(rowAnswered(r.value[0] ?? { uuid: '' }), true)
  t.equal(rowAnswered({ uuid: 'x', callstate: 'RINGING' }), false)
  t.equal(parseShowChannels('-ERR nope').ok, false)
  t.equal(parseShowChannels('{"rows":3}').ok, false)
})
