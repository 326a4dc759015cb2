/**
 * Authentication: HTTP Basic with the domain name and an API token (plain or sha256), one
 * indistinguishable 401 for every failure, and a token that acts only on its own domain.
 */
import t from 'tap'
import { authenticate, WWW_AUTHENTICATE } from '../../src/api/auth.js'
import { Directory } from '../../src/directory/directory.js'
import {
  AUTH_A,
  AUTH_B,
  DOMAIN_A,
  DOMAIN_B,
  HASHED_TOKEN_A,
  TOKEN_A,
  TOKEN_B,
  TOKEN_B_HASHED,
  basic,
  domainB,
  exampleConfig,
  isError,
  post,
  send,
  startApp,
  type Reply,
} from './helpers.js'

t.test('authenticate()', async (t) => {
  const directory = new Directory([...(await exampleConfig()).domains, domainB])
  const accepted = (h: string | undefined) => {
    const r = authenticate(h, directory)
    return r.ok ? r.value.name : r.error.id
  }
  t.equal(accepted(basic(DOMAIN_A, TOKEN_A)), DOMAIN_A, 'plain token')
  t.equal(accepted(basic(DOMAIN_A, HASHED_TOKEN_A)), DOMAIN_A, 'token stored as sha256:<hex>')
  t.equal(accepted(basic(DOMAIN_B, TOKEN_B)), DOMAIN_B)
  t.equal(accepted(basic(DOMAIN_B, TOKEN_B_HASHED)), DOMAIN_B, 'a later token of the list')
  t.equal(accepted(basic('EXAMPLE.test', TOKEN_A)), DOMAIN_A, 'domain names are case-insensitive')
  t.equal(accepted(`bAsIc ${Buffer.from(`${DOMAIN_A}:${TOKEN_A}`).toString('base64')}`), DOMAIN_A, 'the scheme is case-insensitive')

  const refused: Array<[string | undefined, string]> = [
    [undefined, 'no header'],
    ['', 'empty header'],
    [`Bearer ${TOKEN_A}`, 'another scheme'],
    ['Basic', 'no credentials'],
    ['Basic !!!!', 'not base64'],
    [`Basic ${Buffer.from(`${DOMAIN_A}:${TOKEN_A}`).toString('base64').replace(/=+$/, '')}x`, 'bad base64 length'],
    [`Basic ${Buffer.from(`${DOMAIN_A}${TOKEN_A}`).toString('base64')}`, 'no colon'],
    [`Basic ${Buffer.from(`:${TOKEN_A}`).toString('base64')}`, 'no username'],
    [basic(DOMAIN_A, ''), 'empty token'],
    [basic(DOMAIN_A, `${TOKEN_A}x`), 'token with an extra character'],
    [basic(DOMAIN_A, TOKEN_A.slice(0, -1)), 'token missing a character'],
    [basic(DOMAIN_A, TOKEN_B), "another domain's token"],
    [basic(DOMAIN_B, TOKEN_A), "another domain's token, the other way"],
    [basic(DOMAIN_A, 'sha256:fd3b63e00575f4a673206d9c2a37f9099c5299a71c8c2e589e7f17e8c083c990'), 'the stored digest itself is not a token'],
    [basic('nowhere.test', TOKEN_A), 'unknown domain'],
    [`Basic ${Buffer.from([0x65, 0x3a, 0xff, 0xfe]).toString('base64')}`, 'not UTF-8'],
    [`Basic ${'A'.repeat(5000)}`, 'oversized header'],
  ]
  for (const [header, why] of refused) t.equal(accepted(header), 'unauthorized', why)
  for (const [header, why] of refused) t.equal(accepted(header), 'unauthorized', `${why}, asked again (a refusal is never remembered)`)
})

t.test('authenticate(): an accepted header is remembered for its configuration only', async (t) => {
  const config = await exampleConfig()
  const before = new Directory([...config.domains, domainB])
  const header = basic(DOMAIN_A, TOKEN_A)
  t.ok(authenticate(header, before).ok, 'accepted')
  t.ok(authenticate(header, before).ok, 'accepted again (from the cache)')
  // A reload that removes the token builds a new Directory: the remembered acceptance does not carry over.
  const withoutToken = config.domains.map((d) => (d.name === DOMAIN_A ? { ...d, api_tokens: d.api_tokens.filter((x) => x !== TOKEN_A) } : d))
  const after = new Directory([...withoutToken, domainB])
  const r = authenticate(header, after)
  t.equal(r.ok ? 'accepted' : r.error.id, 'unauthorized', 'refused once the reload removed the token')
  t.equal(authenticate(basic(DOMAIN_A, `${TOKEN_A}x`), before).ok, false, 'a near miss is still refused by the old configuration')
})

t.test('every authentication failure gets the same 401 with a challenge, before the body is read', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  const body = { user_name: 'alice', destination: 'bob' }
  const replies: Reply[] = []
  for (const auth of [null, 'Basic xyz', basic(DOMAIN_A, 'wrong-token-wrong-token'), basic('nowhere.test', TOKEN_A), basic(DOMAIN_A, TOKEN_B)]) {
    const r = await post(h, 'call_user', body, auth)
    isError(t, r, 401, 'unauthorized')
    t.equal(r.headers.get('www-authenticate'), WWW_AUTHENTICATE)
    replies.push(r)
  }
  for (const r of replies.slice(1)) t.same(r.body, replies[0]?.body, 'identical bodies')
  // Unauthenticated: the body is not looked at, so a non-JSON body still gets 401 (not 415).
  const r = await send(`${h.base}/api/call_group`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' })
  isError(t, r, 401, 'unauthorized')
  t.equal(h.engine.plans.length, 0)
  // A request with no domain is logged without one.
  t.equal(h.logs[0]?.domain, undefined)
  t.equal(h.logs[0]?.error, 'unauthorized')
})

t.test('the sha256 token works over HTTP', async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  const r = await post(h, 'call_user', { user_name: 'alice', destination: 'bob' }, basic(DOMAIN_A, HASHED_TOKEN_A))
  t.equal(r.status, 200)
  t.equal(h.engine.last()?.domain, DOMAIN_A)
})

t.test("a domain's token cannot tell another domain's records from missing ones", async (t) => {
  const h = await startApp()
  t.teardown(() => h.close())
  const same = async (op: string, ofOther: object, missing: object, auth: string, id: string) => {
    const a = await post(h, op, ofOther, auth)
    const b = await post(h, op, missing, auth)
    t.equal(a.status, b.status, `${op}: same status`)
    t.same(a.body, b.body, `${op}: same body`)
    t.equal(a.body.error && (a.body.error as { id: string }).id, id)
  }
  // Domain A naming B's records, compared with names that exist nowhere.
  await same('call_user', { user_name: 'zara', destination: 'bob' }, { user_name: 'nobody', destination: 'bob' }, AUTH_A, 'user_not_found')
  await same('call_user', { user_id: '71', destination: 'bob' }, { user_id: '999', destination: 'bob' }, AUTH_A, 'user_not_found')
  await same('call_user', { user_extension: '1071', destination: 'bob' }, { user_extension: '1999', destination: 'bob' }, AUTH_A, 'user_not_found')
  await same('call_user', { user_name: 'alice', destination: 'zara' }, { user_name: 'alice', destination: 'nobody' }, AUTH_A, 'destination_not_found')
  await same('call_group', { group_name: 'desk', destination: 'bob' }, { group_name: 'nogroup', destination: 'bob' }, AUTH_A, 'group_not_found')
  await same('call_external', { target: '0311112222', destination: 'desk' }, { target: '0311112222', destination: 'nogroup' }, AUTH_A, 'destination_not_found')
  // And the other way round.
  await same('call_user', { user_name: 'alice', destination: 'yuri' }, { user_name: 'nobody', destination: 'yuri' }, AUTH_B, 'user_not_found')
  await same('initiate_call', { user_name: 'bob', destination: 'zara' }, { user_name: 'nobody', destination: 'zara' }, AUTH_B, 'user_not_found')
  await same('call_group', { group_name: 'sales', destination: 'zara' }, { group_name: 'nogroup', destination: 'zara' }, AUTH_B, 'group_not_found')
  t.equal(h.engine.plans.length, 0)
  // B's own records work with B's token, and the plan is B's.
  t.equal((await post(h, 'call_user', { user_name: 'zara', destination: 'yuri' }, AUTH_B)).status, 200)
  t.equal(h.engine.last()?.domain, DOMAIN_B)
})
