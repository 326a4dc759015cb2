/**
 * The published registrations (src/cluster/registrations.ts) on a real redis-server, with the
 * box played by a stand-in (its events, its table, its sofia_contact answer): the table is
 * published at start; a register adds the user; an unregister removes it only when the box says
 * the user has no terminal left; a re-read after a reconnection to the box takes back what went
 * meanwhile; Redis restarted empty gets everything again; a box that cannot be read is retried;
 * readers see only the nodes whose lease lives.
 */
import t, { type Test } from 'tap'
import { connectRedis, type ClusterConnection } from '../../src/cluster/connection.js'
import { clusterKeys } from '../../src/cluster/keys.js'
import { publishRegistrations, registrationKeys, type PublishedRegistrations } from '../../src/cluster/registrations.js'
import type { BoxRegistrations, RegisteredUser, RegistrationChange } from '../../src/pbx/box-registrations.js'
import { silentLogger } from '../../src/util/logger.js'
import { err, ok } from '../../src/util/result.js'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { waitFor as waitForCondition } from '../support/wait.js'

t.setTimeout(60_000)
const skip = redisServerBinary() === undefined ? SKIP_REASON : false
const keys = clusterKeys('t')
const regKeys = registrationKeys('t')

/** The box: its table (users → terminals), its events, its reconnections. */
class FakeBox implements BoxRegistrations {
  readonly terminals = new Map<string, number>()
  listFails = false
  private changeListeners: Array<(c: RegistrationChange) => void> = []
  private connectedListeners: Array<() => void> = []
  onChange(l: (c: RegistrationChange) => void): void {
    this.changeListeners.push(l)
  }
  onConnected(l: () => void): void {
    this.connectedListeners.push(l)
  }
  async list() {
    if (this.listFails) return err('show registrations: disconnected')
    return ok([...this.terminals.keys()].map((k): RegisteredUser => ({ user: k.split('@')[0] as string, domain: k.split('@')[1] as string, expiresAt: 1 })))
  }
  async isRegistered(user: string, domain: string) {
    return ok((this.terminals.get(`${user}@${domain}`) ?? 0) > 0)
  }
  register(user: string, domain: string): void {
    const k = `${user}@${domain}`
    this.terminals.set(k, (this.terminals.get(k) ?? 0) + 1)
    for (const l of this.changeListeners) l({ kind: 'register', user, domain, expiresInS: 60 })
  }
  unregister(user: string, domain: string, kind: 'unregister' | 'expire' = 'unregister'): void {
    const k = `${user}@${domain}`
    const n = (this.terminals.get(k) ?? 0) - 1
    if (n > 0) this.terminals.set(k, n)
    else this.terminals.delete(k)
    for (const l of this.changeListeners) l({ kind, user, domain })
  }
  reconnected(): void {
    for (const l of this.connectedListeners) l()
  }
}

async function node(t: Test, url: string, id: string, box: FakeBox): Promise<{ conn: ClusterConnection; regs: PublishedRegistrations }> {
  const conn = connectRedis(url, silentLogger())
  await new Promise<void>((r) => conn.onReady(() => r()))
  await conn.redis.set(keys.lease(id), '1', 'PX', 60_000)
  const regs = publishRegistrations({ conn, keys, regKeys, nodeId: id, box, logger: silentLogger() })
  t.teardown(async () => {
    regs.stop()
    await conn.close()
  })
  await regs.settled()
  return { conn, regs }
}

const waitFor = (what: string, cond: () => Promise<boolean>, ms = 10_000): Promise<void> => waitForCondition(what, cond, ms, 20)

t.test('published from the box: at start, on register, on unregister only when no terminal is left', { skip }, async (t) => {
  const redis = await startRedisServer(t)
  const boxB = new FakeBox()
  boxB.terminals.set('stay@example.test', 1)
  const a = await node(t, redis.url, 'a', new FakeBox())
  const b = await node(t, redis.url, 'b', boxB)
  t.same(await a.regs.owners('example.test', 'stay'), ['b'], "the table read at b's start")
  t.same(await a.regs.owners('EXAMPLE.test', 'Stay'), ['b'], 'names compared without case')
  t.same(await b.regs.owners('example.test', 'stay'), [], 'a node does not list itself')
  t.same(await a.regs.owners('example.test', 'nobody'), [])

  boxB.register('alice', 'example.test')
  boxB.register('alice', 'example.test')
  await b.regs.settled()
  t.same(await a.regs.owners('example.test', 'alice'), ['b'])
  boxB.unregister('alice', 'example.test')
  await b.regs.settled()
  t.same(await a.regs.owners('example.test', 'alice'), ['b'], 'one of two terminals went: still published')
  boxB.unregister('alice', 'example.test', 'expire')
  await b.regs.settled()
  t.same(await a.regs.owners('example.test', 'alice'), [], 'the last one expired: removed')
  t.same(await b.conn.redis.smembers(regKeys.node('b')), ['example.test:stay'], "b's own index follows")
})

t.test('a re-read after the box reconnected takes back what went meanwhile; one that fails is retried', { skip }, async (t) => {
  const redis = await startRedisServer(t)
  const boxB = new FakeBox()
  boxB.terminals.set('u1@d', 1)
  boxB.terminals.set('u2@d', 1)
  const a = await node(t, redis.url, 'a', new FakeBox())
  const b = await node(t, redis.url, 'b', boxB)
  // Events lost while the link was down: u1 went, u3 came.
  boxB.terminals.delete('u1@d')
  boxB.terminals.set('u3@d', 1)
  boxB.listFails = true
  boxB.reconnected()
  await b.regs.settled()
  t.same(await a.regs.owners('d', 'u1'), ['b'], 'the box could not be read: nothing taken back on a guess')
  boxB.listFails = false
  await waitFor('the retried re-read', async () => (await a.regs.owners('d', 'u1')).length === 0 && (await a.regs.owners('d', 'u3')).length === 1)
  t.same(await a.regs.owners('d', 'u2'), ['b'])
})

t.test('Redis restarted empty: every node publishes its box again on reconnection', { skip }, async (t) => {
  const redis = await startRedisServer(t)
  const boxB = new FakeBox()
  boxB.terminals.set('stay@example.test', 1)
  const a = await node(t, redis.url, 'a', new FakeBox())
  const b = await node(t, redis.url, 'b', boxB)
  await redis.kill()
  await redis.start()
  await waitFor('both reconnected', async () => a.conn.isReady() && b.conn.isReady())
  // The lease is the lease module's to renew; here the test plays it.
  await b.conn.redis.set(keys.lease('b'), '1', 'PX', 60_000)
  await waitFor('republished', async () => (await a.regs.owners('example.test', 'stay')).length === 1)
  t.same(await a.regs.owners('example.test', 'stay'), ['b'])
})

t.test("a dead node's entries are ignored (and dropped) by readers", { skip }, async (t) => {
  const redis = await startRedisServer(t)
  const boxB = new FakeBox()
  const boxC = new FakeBox()
  boxB.terminals.set('stay@d', 1)
  boxC.terminals.set('stay@d', 1)
  const a = await node(t, redis.url, 'a', new FakeBox())
  await node(t, redis.url, 'b', boxB)
  await node(t, redis.url, 'c', boxC)
  t.same((await a.regs.owners('d', 'stay')).sort(), ['b', 'c'], 'two boxes have the user')
  await a.conn.redis.del(keys.lease('c'))
  t.same(await a.regs.owners('d', 'stay'), ['b'], "c's lease is gone")
  await waitFor("c's entry dropped", async () => (await a.conn.redis.hkeys(regKeys.user('d', 'stay'))).join() === 'b')
})
