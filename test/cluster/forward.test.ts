/**
 * Forwarding a call_user to the other nodes (src/cluster/forward.ts) when one of them does not
 * answer: a node that refused the connection never got the request, so the next is asked; a node
 * that took the request and went silent may have placed the call, so no other node is asked (the
 * user would ring twice) and the client gets 503 cluster_unavailable naming it. The nodes whose
 * box published the user are asked first, the others only when none of them placed it. The
 * registry is a stand-in for Redis; the nodes are real HTTP servers on loopback.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { ClusterConnection } from '../../src/cluster/connection.js'
import { forwarder } from '../../src/cluster/forward.js'
import { clusterKeys } from '../../src/cluster/keys.js'
import { silentLogger } from '../../src/util/logger.js'

const keys = clusterKeys()

async function listen(t: Test, handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0
  const server = createServer((req, res) => {
    hits++
    handler?.(req, res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits }
}

/** A closed port: connecting to it is refused. */
async function refusedUrl(): Promise<string> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>((r) => s.close(() => r()))
  return `http://127.0.0.1:${port}`
}

const registry = (nodes: Record<string, string>): ClusterConnection =>
  ({
    isReady: () => true,
    redis: { hgetall: async () => nodes, exists: async () => 1 },
  }) as unknown as ClusterConnection

const request = { operation: 'call_user' as const, authorization: 'Basic eDp5', body: { user_name: 'stay', destination: '0312345679' }, requestId: 'r-1', domain: 'example.test', userName: 'stay' }

const notRegistered = (_req: unknown, res: import('node:http').ServerResponse) =>
  res.writeHead(409, { 'content-type': 'application/json' }).end('{"error":{"id":"user_not_registered","description":"x"}}')

t.test('a node that refused the connection is passed over; the next one places the call', async (t) => {
  const placing = await listen(t, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"result_code":0,"uuids":["u-1"]}'))
  const forward = forwarder({ conn: registry({ down: await refusedUrl(), up: placing.url }), keys, nodeId: 'me', prefix: () => '/api', logger: silentLogger(), timeoutMs: 2000 })
  const reply = await forward(request)
  t.same(reply, { status: 200, body: '{"result_code":0,"uuids":["u-1"]}' })
  t.equal(placing.hits(), 1)
})

t.test('a node that took the request and went silent: 503 cluster_unavailable, no other node asked', async (t) => {
  const silent = await listen(t, () => undefined)
  const other = await listen(t, (_req, res) => res.writeHead(200).end('{"result_code":0,"uuids":["u-2"]}'))
  const forward = forwarder({ conn: registry({ silent: silent.url, other: other.url }), keys, nodeId: 'me', prefix: () => '/api', logger: silentLogger(), timeoutMs: 300 })
  const reply = await forward(request)
  t.equal(reply?.status, 503)
  const body = JSON.parse(reply?.body ?? '{}') as { error?: { id: string; description: string } }
  t.equal(body.error?.id, 'cluster_unavailable')
  t.match(body.error?.description, /node silent .*may have been placed there/)
  t.equal(silent.hits(), 1, 'the silent node got the request')
  t.equal(other.hits(), 0, 'the user is not rung from a second box')
})

t.test('the published owner is asked first; the others are not asked once it placed the call', async (t) => {
  const first = await listen(t, notRegistered)
  const owner = await listen(t, (_req, res) => res.writeHead(200).end('{"result_code":0,"uuids":["u-3"]}'))
  const asked: string[] = []
  const forward = forwarder({
    conn: registry({ first: first.url, owner: owner.url }),
    keys,
    nodeId: 'me',
    prefix: () => '/api',
    logger: silentLogger(),
    owners: async (domain, user) => {
      asked.push(`${user}@${domain}`)
      return ['owner']
    },
  })
  t.same(await forward(request), { status: 200, body: '{"result_code":0,"uuids":["u-3"]}' })
  t.same(asked, ['stay@example.test'])
  t.same([owner.hits(), first.hits()], [1, 0], 'the node listed first in the registry was not asked')
})

t.test('a published owner that no longer has the user: the others are asked (the view lags)', async (t) => {
  const stale = await listen(t, notRegistered)
  const other = await listen(t, (_req, res) => res.writeHead(200).end('{"result_code":0,"uuids":["u-4"]}'))
  const forward = forwarder({ conn: registry({ other: other.url, stale: stale.url }), keys, nodeId: 'me', prefix: () => '/api', logger: silentLogger(), owners: async () => ['stale'] })
  t.same(await forward(request), { status: 200, body: '{"result_code":0,"uuids":["u-4"]}' })
  t.same([stale.hits(), other.hits()], [1, 1], 'the stale owner once, then the other')
})

t.test('an owner unknown to the registry is skipped; no user name (no lookup): everyone is asked as before', async (t) => {
  const a = await listen(t, notRegistered)
  const b = await listen(t, notRegistered)
  const forward = forwarder({ conn: registry({ a: a.url, b: b.url }), keys, nodeId: 'me', prefix: () => '/api', logger: silentLogger(), owners: async () => ['ghost'] })
  t.equal(await forward(request), undefined, 'nobody has the user: the caller answers user_not_registered')
  t.same([a.hits(), b.hits()], [1, 1])
  const { userName: _u, ...anonymous } = request
  let looked = false
  const forward2 = forwarder({ conn: registry({ a: a.url }), keys, nodeId: 'me', prefix: () => '/api', logger: silentLogger(), owners: async () => ((looked = true), []) })
  t.equal(await forward2(anonymous), undefined)
  t.notOk(looked, 'no lookup without a user name')
})
