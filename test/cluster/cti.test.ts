/**
 * Issue 17 item 3, one CTI view: two nodes (each its daemon and its simulator, processes of their
 * own) on a real redis-server. A CTI connection to v1 sees a call placed on v2's box appear,
 * answer and end, with the frames v2's own subscriber gets; a hangup sent on v1 for v2's channel is
 * carried out on v2's switch (its ESL observer sees the channel go); a bad command, a read-only
 * ticket and a ticket of a user who is no party are answered on v1 exactly as on v2; v2 killed,
 * its channels leave v1's view within its lease (plus the 500 ms check).
 */
import t, { type Test } from 'tap'
import WebSocket from 'ws'
import { redisServerBinary, SKIP_REASON, startRedisServer } from './redis-server.js'
import { killNode, startNodes, type ClusterNodeStack } from './nodes.js'
import { DOMAIN, TOKEN, waitFor } from '../faults/harness/stack.js'
import { Client, type Message } from '../cti/helpers.js'

const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`
const LEASE_MS = 1500
t.setTimeout(180_000)

async function wsOpen(t: Test, n: ClusterNodeStack, query: string, headers: Record<string, string> = { authorization: AUTH }): Promise<{ client: Client; initial: Message }> {
  const ws = new WebSocket(`${n.stack.baseUrl.replace(/^http/, 'ws')}/api/ws_cti?${query}`, { headers })
  const client = new Client(ws)
  t.teardown(() => void client.close())
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)))
  })
  await waitFor('initial_info', () => client.received.length > 0, 10000)
  const initial = client.received.shift() as Message
  return { client, initial }
}

async function ticket(n: ClusterNodeStack, query: string): Promise<string> {
  const res = await fetch(`${n.stack.baseUrl}/api/gen_ws_ticket`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ uri: `/api/ws_cti?${query}` }),
  })
  const body = (await res.json()) as { ticket?: string }
  if (body.ticket === undefined) throw new Error(`no ticket: ${JSON.stringify(body)}`)
  return `${query}&ticket=${body.ticket}`
}

/** Sends a command and waits (generously) for its result, leaving the other frames queued. */
async function command(c: Client, cmd: Record<string, unknown> & { id: string }): Promise<Message> {
  c.ws.send(JSON.stringify(cmd))
  let result: Message | undefined
  await waitFor(`the result of ${cmd.id}`, () => (result = c.received.find((m) => m.type === 'result' && m.id === cmd.id)) !== undefined, 15000)
  c.received.splice(c.received.indexOf(result as Message), 1)
  return result as Message
}

/** The (event, channel) pairs a client got for a channel, without the connection's own seq. */
const framesOf = (c: Client, uuid: string): Array<{ event: unknown; channel: Record<string, unknown> }> =>
  c.received
    .filter((m) => m.type === 'info_event' && (m.channel as { uuid: string }).uuid === uuid)
    .map((m) => ({ event: m.event, channel: m.channel as Record<string, unknown> }))

const removed = (c: Client, uuid: string): boolean => framesOf(c, uuid).some((f) => f.event === 'removed')

/** Whether `sub` is `all` with some elements left out (the view may skip an update it replaced by a newer one). */
function isSubsequence<T>(sub: readonly T[], all: readonly T[]): boolean {
  let i = 0
  for (const x of all) if (i < sub.length && JSON.stringify(x) === JSON.stringify(sub[i])) i += 1
  return i === sub.length
}

t.test('a CTI connection to any node sees and commands every box\'s channels', { skip: redisServerBinary() === undefined ? SKIP_REASON : false }, async (t) => {
  const started = performance.now()
  const redis = await startRedisServer(t)
  const nodes = await startNodes(t, redis.url, ['v1', 'v2'], { leaseMs: LEASE_MS })
  const [v1, v2] = nodes as [ClusterNodeStack, ClusterNodeStack]
  const onV1 = (await wsOpen(t, v1, 'app_name=wall&full_events=true')).client
  const onV2 = (await wsOpen(t, v2, 'app_name=wall&full_events=true')).client

  // A call on v2's box that answers and ends (brief answers after 100 ms, hangs up 400 ms later).
  let uuids: string[] = []
  await waitFor('a call placed on v2', async () => {
    const r = await v2.stack.call('call_user', { user_name: 'brief', destination: '0312345678' })
    uuids = r.json?.uuids ?? []
    return r.status === 200
  }, 15000, 100)
  t.ok(uuids.length > 0, 'call_user on v2 answered 200')
  await waitFor("the call's end on v1's view", () => uuids.every((u) => removed(onV1, u)) && uuids.every((u) => removed(onV2, u)), 20000)
  for (const uuid of uuids) {
    const remote = framesOf(onV1, uuid)
    const local = framesOf(onV2, uuid)
    t.equal(remote[0]?.event, 'added', `v1: ${uuid} added`)
    t.ok(remote.some((f) => f.channel.answer_at !== null && f.event === 'updated'), 'v1: answered')
    t.equal(remote.at(-1)?.event, 'removed', 'v1: removed')
    t.ok(isSubsequence(remote, local), "v1's frames are v2's own (same channel objects, same order)")
    t.same(remote.length, local.length, 'none skipped')
  }
  t.notOk(uuids.some((u) => v1.stack.observer.live.has(u)), "never on v1's switch")

  // A ringing call on v2, hung up from v1.
  const ringing = async (): Promise<string> => {
    const r = await v2.stack.call('call_user', { user_name: 'ring', destination: '0312345679' })
    const uuid = r.json?.uuids?.[0] ?? ''
    t.equal(r.status, 200, 'call_user for ring on v2')
    await waitFor("the ringing leg in v1's view", () => framesOf(onV1, uuid).length > 0, 10000)
    return uuid
  }
  const first = await ringing()
  t.same(await command(onV1, { id: 'h1', cmd: 'hangup', uuid: first }), { type: 'result', id: 'h1', cmd: 'hangup', result_code: 0 }, 'hangup from v1: done')
  await waitFor("the leg gone from v2's switch (its observer)", () => !v2.stack.observer.live.has(first), 10000)
  await waitFor("and from v1's view", () => removed(onV1, first), 10000)

  // Refusals are v2's own, on v1 as on v2.
  const second = await ringing()
  const bad = { id: 'b1', cmd: 'hangup', uuid: second, cause: 'BOGUS' }
  const badOnV1 = await command(onV1, bad)
  t.match(badOnV1, { result_code: 500, error: { id: 'invalid_parameter' } }, 'a bad cause: invalid_parameter')
  t.same(badOnV1, await command(onV2, bad), 'as on v2')
  const monitor = 'app_name=board&full_events=true&read_only=true'
  const monitorV1 = await wsOpen(t, v1, await ticket(v1, monitor), {})
  t.ok((monitorV1.initial.channels as Array<{ uuid: string }>).some((c) => c.uuid === second), "a monitor ticket on v1 sees v2's channel in its initial_info")
  const ro = await command(monitorV1.client, { id: 'r1', cmd: 'hangup', uuid: second })
  t.match(ro, { result_code: 500, error: { id: 'permission_denied' } }, 'read-only: permission_denied')
  t.same(ro, await command((await wsOpen(t, v2, await ticket(v2, monitor), {})).client, { id: 'r1', cmd: 'hangup', uuid: second }), 'as on v2')
  const stranger = 'app_name=crm&user_name=caller'
  const notTheirs = await command((await wsOpen(t, v1, await ticket(v1, stranger), {})).client, { id: 's1', cmd: 'hangup', uuid: second })
  t.match(notTheirs, { result_code: 500, error: { id: 'channel_not_found' } }, 'a ticket of a user who is no party: channel_not_found')
  t.same(notTheirs, await command((await wsOpen(t, v2, await ticket(v2, stranger), {})).client, { id: 's1', cmd: 'hangup', uuid: second }), 'as on v2')
  const own = await wsOpen(t, v1, await ticket(v1, 'app_name=crm&user_name=ring'), {})
  t.ok((own.initial.channels as Array<{ uuid: string }>).some((c) => c.uuid === second), "the user's own ticket on v1 sees its leg on v2")
  t.ok(v2.stack.observer.live.has(second), 'none of the refused commands reached the leg')

  // v2 dies (daemon and box): its channels leave v1's view within its lease.
  const killedAt = performance.now()
  await killNode(v2)
  await waitFor("v2's channel gone from v1's view", () => removed(onV1, second), 15000)
  const gone = performance.now() - killedAt
  t.comment(`v2's channel left v1's view ${Math.round(gone)} ms after the kill (lease ${LEASE_MS} ms, checked every 500 ms)`)
  const last = framesOf(onV1, second).at(-1)
  t.same(last?.channel.uuid, second, 'removed with its last known view')
  t.same(
    (await wsOpen(t, v1, 'app_name=late&full_events=true')).initial.channels,
    [],
    "a new connection to v1 lists none of v2's channels",
  )
  t.comment(`suite ran ${Math.round((performance.now() - started) / 1000)} s`)
})
