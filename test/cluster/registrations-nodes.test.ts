/**
 * Issue 17 item 2, registrations published (docs/cluster.md "Registrations everywhere"): three
 * nodes, the user `stay` registered on r2's switch only. Each node publishes its box's
 * registrations in Redis from the sofia events, so a call_user for `stay` sent to r1 goes straight
 * to r2, and r3 is never asked. When `stay` unregisters on r2 (its terminal set to `unregistered`
 * and the simulator reloaded: sofia::unregister), the published view drops it; a call_user is then
 * `user_not_registered` (every node asked, none has it); registered again, it is published again.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { connectRedis } from '../../src/cluster/connection.js'
import { registrationKeys } from '../../src/cluster/registrations.js'
import { silentLogger } from '../../src/util/logger.js'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { startNodes, type ClusterNodeStack } from './nodes.js'
import { DOMAIN, editYaml, waitFor } from '../faults/harness/stack.js'

t.setTimeout(180_000)

const STAY = (registered: boolean) => ({ id: '6', name: 'stay', extension: '1006', password: 'stay-sip-secret', sim: { terminals: [registered ? { answer_after: 1 } : { behaviour: 'unregistered' }] } })

/** r2's switch: `stay` registered or not, as its phone (un)registering; the simulator re-reads its domains (SIGHUP). */
function setStay(n: ClusterNodeStack, registered: boolean): void {
  const file = join(n.stack.dir, 'domains', `${DOMAIN}.yaml`)
  editYaml(file, (doc) => {
    doc.users = (doc.users as Array<{ name: string }>).map((u) => (u.name === 'stay' ? STAY(registered) : u))
  })
  if (!readFileSync(file, 'utf8').includes('stay')) throw new Error('no stay in the domain file')
  n.stack.sim?.signal('SIGHUP')
}

const callUserLines = (n: ClusterNodeStack): number => n.stack.daemons.flatMap((d) => d.lines).filter((l) => l.msg === 'http request' && l.path === '/api/call_user').length

t.test('call_user goes straight to the node whose box published the user', { skip: redisServerBinary() === undefined ? SKIP_REASON : false }, async (t) => {
  const redis = await startRedisServer(t)
  const nodes = await startNodes(t, redis.url, ['r1', 'r2', 'r3'], {
    leaseMs: 3000,
    domainEditFor: (id, doc) => {
      ;(doc.users as unknown[]).push(STAY(id === 'r2'))
      ;(doc.users as unknown[]).push({ id: '7', name: 'nobody', extension: '1007', password: 'nobody-sip-secret', sim: { terminals: [{ behaviour: 'unregistered' }] } })
    },
  })
  const [r1, r2, r3] = nodes as [ClusterNodeStack, ClusterNodeStack, ClusterNodeStack]
  const conn = connectRedis(redis.url, silentLogger())
  t.teardown(() => conn.close())
  const stayKey = registrationKeys('cod').user(DOMAIN, 'stay')
  await waitFor("stay published by r2 (its table read at start)", async () => conn.isReady() && (await conn.redis.hkeys(stayKey)).join() === 'r2', 20000, 50)
  await waitFor('the first admission', async () => (await r2.stack.call('call_user', { user_name: 'brief', destination: '0312345678' })).status === 200, 15000, 100)

  const askedBefore = [callUserLines(r2), callUserLines(r3)]
  const r = await r1.stack.call('call_user', { user_name: 'stay', destination: '0312345679' })
  t.equal(r.status, 200, 'r1 answers 200: r2 placed it')
  const uuid = r.json?.uuids?.[0] ?? ''
  await waitFor("the leg on r2's switch", () => r2.stack.observer.live.has(uuid), 10000, 20)
  t.notOk(r1.stack.observer.live.has(uuid) || r3.stack.observer.live.has(uuid), 'on no other switch')
  // At least one more: a late line of the 'brief' admissions above may land after the count was taken.
  await waitFor("r2's log line of the forwarded request", async () => callUserLines(r2) >= (askedBefore[0] ?? 0) + 1, 15000, 20)
  t.equal(callUserLines(r3), askedBefore[1], 'r3 was not asked')
  // r1's log line may be read after its reply: waited for, not looked up once.
  const forwardedLine = () => r1.stack.daemon?.lines.find((l) => l.msg === 'call_user forwarded to the node whose box has the user' && l.node === 'r2')
  await waitFor("r1's log line of the forward", async () => forwardedLine() !== undefined, 15000, 20)
  t.equal(forwardedLine()?.published, true, 'r1 knew r2 from the published view')

  // The phone on r2 unregisters: sofia::unregister, r2 asks its box, removes its entry.
  const unregisteredAt = Date.now()
  setStay(r2, false)
  await waitFor('stay no longer published', async () => (await conn.redis.hkeys(stayKey)).length === 0, 10000, 20)
  t.comment(`the view dropped stay ${Date.now() - unregisteredAt} ms after the SIGHUP (reload, sofia::unregister, sofia_contact, HDEL)`)
  const gone = await r1.stack.call('call_user', { user_name: 'stay', destination: '0312345680' })
  t.same([gone.status, gone.json?.error?.id], [409, 'user_not_registered'], 'no box has the user: user_not_registered')

  setStay(r2, true)
  await waitFor('stay published again', async () => (await conn.redis.hkeys(stayKey)).join() === 'r2', 10000, 20)
  const back = await r1.stack.call('call_user', { user_name: 'stay', destination: '0312345681' })
  t.equal(back.status, 200, 'reachable through r1 again')

  const nobody = await r3.stack.call('call_user', { user_name: 'nobody', destination: '0312345682' })
  t.same([nobody.status, nobody.json?.error?.id], [409, 'user_not_registered'], 'registered on no box: user_not_registered')
  const unknown = await r3.stack.call('call_user', { user_name: 'ghost', destination: '0312345683' })
  t.equal(unknown.status === 200, false, 'a user no directory has is refused, never forwarded into a call')
})
