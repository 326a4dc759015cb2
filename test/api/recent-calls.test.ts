/**
 * `GET {prefix}/finished_calls` and `GET {prefix}/channel_samples` (src/api/calls/recent.ts,
 * docs/api.md "Finished calls and channel samples") on the whole daemon and its simulator: a
 * call ended is the newest finished call, the samples count the
 * live channels against the limit, the token is required, and every reply matches the OpenAPI
 * document the daemon serves.
 */
import t from 'tap'
import type { JsonObject } from '../../src/api/openapi/json.js'
import { DEMO_AUTH, startHarness } from '../e2e/harness.js'
import { documentChecker } from '../openapi/validate.js'

t.test('finished calls and channel samples', async (t) => {
  const h = await startHarness({ channelSampleIntervalMs: 50 })
  t.teardown(h.close)
  const base = h.daemon.baseUrl
  const get = async (path: string, auth: string | null = DEMO_AUTH) => {
    const res = await fetch(`${base}${path}`, { headers: auth === null ? {} : { authorization: auth } })
    return { status: res.status, headers: Object.fromEntries(res.headers), body: (await res.json()) as Record<string, unknown> }
  }
  const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as JsonObject
  const check = documentChecker(doc)
  const conforms = (path: string, r: Awaited<ReturnType<typeof get>>) => t.same(check.checkReply(path, 'get', r.status, r.headers, r.body), [], `${path} ${r.status} matches the document`)

  const none = await get('/api/finished_calls')
  t.same(none.body, { result_code: 0, calls: [] }, 'nothing finished yet')
  conforms('/api/finished_calls', none)

  // alice answers (1 s of simulated time, sped up), the number never does; the call is then cancelled.
  const reply = await h.post('call_user', { user_name: 'alice', destination: '0322223333' })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  let counted: Awaited<ReturnType<typeof get>> | undefined
  for (let i = 0; i < 100 && counted === undefined; i++) {
    const r = await get('/api/channel_samples')
    if ((r.body.samples as Array<{ live: number }>).some((s) => s.live > 0)) counted = r
    else await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(counted, 'a sample counts the live legs')
  if (counted !== undefined) {
    t.match(counted.body, { result_code: 0, interval_ms: 50 })
    t.match((counted.body.samples as Array<Record<string, number>>).at(-1), { limit: 20 }, "with the domain's channel_limit")
    conforms('/api/channel_samples', counted)
  }
  // Hung up through the live calls routes, every leg of the domain (this call's only), once the
  // number's leg is there: alice's answer comes first, then the number's leg. Not "two legs":
  // alice has two terminals, so two legs ring before she answers (a sample can come before
  // either; hanging up while alice's legs rang left a call of one party, seen under load).
  const toNumber = (legs: Array<{ called_number: string | null }>) => legs.some((l) => l.called_number === '0322223333')
  let legs: Array<{ uuid: string; called_number: string | null }> = []
  for (let i = 0; i < 200 && !toNumber(legs); i++) {
    const live = await fetch(`${base}/api/calls`, { headers: { authorization: DEMO_AUTH } })
    legs = ((await live.json()) as { calls: typeof legs }).calls
    if (!toNumber(legs)) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(toNumber(legs), "the number's leg, created once alice answered")
  for (const call of legs) {
    await fetch(`${base}/api/calls/${call.uuid}/hangup`, { method: 'POST', headers: { authorization: DEMO_AUTH } })
  }
  let finished: Awaited<ReturnType<typeof get>> | undefined
  for (let i = 0; i < 200 && finished === undefined; i++) {
    const r = await get('/api/finished_calls')
    if ((r.body.calls as unknown[]).length > 0) finished = r
    else await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(finished, 'the call is finished once its last leg is gone')
  if (finished !== undefined) {
    conforms('/api/finished_calls', finished)
    const [call] = finished.body.calls as Array<Record<string, unknown>>
    t.match(call, { parties: ['alice', '0322223333'], operation: 'call_user', outcome: 'answered', hangup_cause: 'NORMAL_CLEARING' })
    t.ok(typeof call?.['request_id'] === 'string' && call['request_id'] !== '', 'the request it came from')
  }

  // No token, no list (each domain's own list: test/channels/call-history.test.ts).
  const anonymous = await get('/api/finished_calls', null)
  t.equal(anonymous.status, 401, 'the token is required')
  conforms('/api/finished_calls', anonymous)
  const anonymousSamples = await get('/api/channel_samples', null)
  t.equal(anonymousSamples.status, 401)
})
