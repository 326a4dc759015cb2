/**
 * Fault: signals to the real daemon process (src/main.ts in a child process).
 * - SIGHUP with a broken configuration: the running configuration stays, the log says why;
 *   once fixed, SIGHUP applies the new one.
 * - SIGTERM with calls ringing: every accepted request's result is delivered when its receiver
 *   is up, left in the journal when not, and the process exits 0; the next start delivers them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { spawnDaemon, type ChildDaemon } from './harness/child.js'
import { basic, editYaml, fixtureCopy, receiver, TOKENS } from './harness/in-process.js'

const post = async (d: ChildDaemon, op: string, body: unknown, token: string) => {
  const res = await fetch(`${d.baseUrl}/api/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic('fault.test', token) },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as { uuids?: string[]; error?: { id: string } }
  return { status: res.status, json, requestId: res.headers.get('x-request-id') ?? '' }
}

t.test('SIGHUP with a broken configuration keeps the running one', async (t) => {
  t.setTimeout(40000)
  const { configFile, dir } = fixtureCopy(t)
  const d = await spawnDaemon(t, configFile)
  const oldToken = TOKENS['fault.test'] ?? ''
  const newToken = 'fault-token-after-reload-42'
  // An authenticated request with no parameters: 400 proves the token was accepted, 401 that it was not.
  t.equal((await post(d, 'call_user', {}, oldToken)).status, 400, 'the token works')

  const domainFile = join(dir, 'domains', 'fault.test.yaml')
  const good = readFileSync(domainFile, 'utf8')
  writeFileSync(domainFile, `${good.replace(oldToken, newToken)}\nusers: [ {{ broken\n`)
  d.proc.kill('SIGHUP')
  const refused = await d.waitLog('configuration reload refused; the running configuration stays')
  t.match(JSON.stringify(refused.problems), /fault\.test\.yaml/, 'the log names the broken file')
  t.equal((await post(d, 'call_user', {}, oldToken)).status, 400, 'old configuration still serving')
  t.equal((await post(d, 'call_user', {}, newToken)).status, 401, 'nothing of the broken file applied')

  // A file that parses but breaks a rule is refused the same way.
  writeFileSync(domainFile, good.replace(oldToken, newToken).replace('channel_limit: 50', 'channel_limit: -1'))
  d.proc.kill('SIGHUP')
  const refused2 = await d.waitLog('configuration reload refused; the running configuration stays', 2)
  t.match(JSON.stringify(refused2.problems), /channel_limit/, 'the log names the rule broken')
  t.equal((await post(d, 'call_user', {}, oldToken)).status, 400, 'still the old configuration')

  writeFileSync(domainFile, good.replace(oldToken, newToken))
  d.proc.kill('SIGHUP')
  await d.waitLog('configuration reloaded')
  t.equal((await post(d, 'call_user', {}, newToken)).status, 400, 'the new token works')
  t.equal((await post(d, 'call_user', {}, oldToken)).status, 401, 'the old token is gone')
  t.equal(d.count('configuration reload refused; the running configuration stays'), 2)

  d.proc.kill('SIGTERM')
  t.equal(await d.exited, 0, 'exits 0')
})

t.test('SIGTERM with calls in flight: results delivered or left in the journal, exit 0, delivered at the next start', async (t) => {
  t.setTimeout(60000)
  const up = await receiver(t)
  const down = await receiver(t)
  await down.close()
  const { configFile, dir } = fixtureCopy(t)
  // A retry would come after the shutdown deadline (10 s): left in the journal at once instead.
  editYaml(configFile, (doc) => {
    doc.callbacks = { timeout_ms: 1000, backoff_initial_ms: 30000, backoff_max_ms: 60000, concurrency_per_domain: 2, allow: ['127.0.0.1/32'] }
  })
  const d = await spawnDaemon(t, configFile)
  const token = TOKENS['fault.test'] ?? ''

  // Answered long before the stop; its first delivery failed and waits for a retry.
  const early = await post(d, 'call_user', { user_name: 'quick', destination: '0311112222', callback_url: down.url }, token)
  t.equal(early.status, 200)
  await d.waitLog('callback attempt failed; retry scheduled')
  // Ringing (nobody answers) when SIGTERM arrives.
  const toUp = await Promise.all([1, 2, 3].map(() => post(d, 'call_user', { user_name: 'ring', destination: '0311112222', callback_url: up.url }, token)))
  const toDown = await Promise.all([1, 2].map(() => post(d, 'call_user', { user_name: 'ring', destination: '0311112222', callback_url: down.url }, token)))
  t.same([...toUp, ...toDown].map((r) => r.status), [200, 200, 200, 200, 200])

  d.proc.kill('SIGTERM')
  t.equal(await d.exited, 0, 'exits 0')

  const upIds = up.deliveries.map((x) => x.headers['x-request-id']).sort()
  t.same(upIds, toUp.map((r) => r.requestId).sort(), 'results for a receiver that is up: delivered before exit, once each')
  for (const x of up.deliveries) t.same(JSON.parse(x.body), { result_code: 500, error: { id: 'cancelled', cause: 'ORIGINATOR_CANCEL' } })

  const left = d.lines.filter((l) => l.msg === 'callback left pending in the journal for the next start')
  t.same(left.map((l) => l.request_id).sort(), [early, ...toDown].map((r) => r.requestId).sort(), 'undeliverable results left in the journal, once each')
  const earlyBody = left.find((l) => l.request_id === early.requestId)?.body
  t.same(JSON.parse(String(earlyBody ?? '{}')), { result_code: 0, uuid: early.json.uuids?.[0] })
  t.ok(existsSync(join(dir, 'journal')), 'the journal sits beside daemon.yaml')

  // Next start, receiver back: delivered at once with the same delivery ids, and only once.
  await down.open()
  const again = await spawnDaemon(t, configFile)
  await new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 10000
    const tick = () => (down.accepted().size >= left.length ? resolve() : Date.now() > deadline ? reject(new Error('pending results not delivered')) : setTimeout(tick, 20))
    tick()
  })
  t.same([...down.accepted().keys()].sort(), left.map((l) => l.delivery_id).sort(), 'delivered with their original delivery ids')
  t.same([...down.accepted().values()].map((ds) => ds.length), left.map(() => 1), 'each accepted once')
  // (That a later start sends nothing again is test/callbacks/journal.test.ts's: this file is near its time limit.)
  again.proc.kill('SIGTERM')
  t.equal(await again.exited, 0)
})
