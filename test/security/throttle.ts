/**
 * Throttled authentication from outside (src/api/throttle.ts, docs/api.md "Throttled
 * authentication"): one client address guessing tokens gets `429 too_many_requests` with
 * `Retry-After` after `max_failures` failures, on every route of the listener (the API, with a
 * valid token too, gen_ws_ticket, the ws_cti upgrade); another client address, and the same
 * domain's valid caller elsewhere, are not slowed, also when a guess is spread over addresses.
 *
 * The attacker addresses are 127.0.0.x of their own (world.ts `send({from})`), so the suite's
 * own traffic from 127.0.0.1 never shares a block.
 */
import { ALPHA, AUTH_ALPHA, MAX_FAILURES, apiPost, basic, outcomeOf, type Answer, type World } from './world.js'

const UPGRADE = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'MDEyMzQ1Njc4OWFiY2RlZg==' }
const BASE = { user_name: 'carol', destination: '0311112222' }

export async function throttling(w: World, attacker: string, bystander: string, spread: readonly string[]): Promise<string[]> {
  const problems: string[] = []
  const family = 'throttle: one address guessing'
  const check = (name: string, a: Answer, status: number) => {
    w.tally.count(family, outcomeOf(a))
    if (a.status !== status) problems.push(`${name}: ${a.status}, expected ${status}: ${a.text.slice(0, 140)}`)
    if (status === 429 && !/^[1-9][0-9]*$/.test(String(a.headers['retry-after']))) problems.push(`${name}: 429 without Retry-After`)
  }
  for (let i = 0; i < MAX_FAILURES; i++) check(`guess ${i + 1}`, await w.send(apiPost('call_user', BASE, basic(ALPHA, `guess-${i}-0123456789`)), { from: attacker }), 401)
  // Past the threshold: every route, every credential (a right token too), before any comparison.
  for (let i = 0; i < 20; i++) check(`guess ${MAX_FAILURES + i + 1}`, await w.send(apiPost('call_user', BASE, basic(ALPHA, `guess-x${i}-0123456789`)), { from: attacker }), 429)
  check('the right token from the blocked address', await w.send(apiPost('call_user', BASE), { from: attacker }), 429)
  check('gen_ws_ticket from the blocked address', await w.send(apiPost('gen_ws_ticket', { uri: '/api/ws_cti?app_name=x&user_name=alice' }), { from: attacker }), 429)
  check('ws_cti upgrade from the blocked address', await w.send({ method: 'GET', path: '/api/ws_cti?app_name=x&user_name=alice', headers: { authorization: AUTH_ALPHA, ...UPGRADE } }, { from: attacker }), 429)
  check('no credentials from the blocked address', await w.send(apiPost('call_group', { group_name: 'sales', destination: '1' }, ''), { from: attacker }), 429)

  // Another address with the right token: not slowed (a refusal of the request's own doing is fine; 401/429 are not).
  const other = await w.send(apiPost('gen_ws_ticket', { uri: '/api/ws_cti?app_name=x&user_name=alice' }), { from: bystander })
  w.tally.count('throttle: bystander', outcomeOf(other))
  if (other.status !== 200) problems.push(`another address with the right token: ${other.status} ${other.text.slice(0, 140)}`)

  // A guess spread over addresses (each under the threshold): the domain's valid callers are not locked out.
  for (const from of spread) {
    for (let i = 0; i < MAX_FAILURES - 2; i++) {
      const a = await w.send(apiPost('call_user', BASE, basic(ALPHA, `spread-${i}-0123456789`)), { from })
      w.tally.count('throttle: guess spread over addresses', outcomeOf(a))
      if (a.status !== 401) problems.push(`spread guess from ${from}: ${a.status}`)
    }
  }
  const valid = await w.send(apiPost('gen_ws_ticket', { uri: '/api/ws_cti?app_name=x&user_name=alice' }))
  w.tally.count('throttle: bystander', outcomeOf(valid))
  if (valid.status !== 200) problems.push(`the domain's valid caller after a spread guess: ${valid.status} ${valid.text.slice(0, 140)}`)
  return problems
}
