/**
 * Issue 8 through the whole daemon: a WebSocket subscriber of bob (user-scoped, Basic auth)
 * follows a call_external whose target carries end_user; bob's bridged channel shows who is on
 * the other end, and a subscriber of another domain's credentials is refused.
 */
import t from 'tap'
import WebSocket from 'ws'
import { startHarness, DEMO_AUTH, type Harness } from './harness.js'

interface Channel {
  uuid: string
  user_id: string | null
  state: string
  end_user: Record<string, string> | null
  other_uuid: string | null
}
interface Message {
  type: string
  seq: number
  event?: string
  channel?: Channel
  channels?: Channel[]
}

let h: Harness
t.before(async () => {
  h = await startHarness()
})
t.teardown(async () => h.close())

function subscribe(query: string, auth = DEMO_AUTH): Promise<{ ws: WebSocket; messages: Message[] }> {
  const url = `${h.daemon.baseUrl.replace('http', 'ws')}/api/ws_cti?${query}`
  const ws = new WebSocket(url, { headers: { authorization: auth } })
  const messages: Message[] = []
  ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as Message))
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, messages }))
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)))
    ws.once('error', reject)
  })
}

t.test('bob\'s panel sees the customer of a call_external with end_user, on bob\'s own bridged channel', async (t) => {
  const { ws, messages } = await subscribe('app_name=panel&user_name=bob')
  t.teardown(() => ws.close())
  await h.waitFor('initial_info', () => messages[0])
  t.equal(messages[0]?.type, 'initial_info')
  t.same(messages[0]?.channels, [], 'nothing live yet')

  const endUser = { id: 'c-42', name: 'Jane Doe', organization: 'ACME, Inc.' }
  const reply = await h.post('call_external', { target: { called_number: '0399990000', end_user: endUser }, destination: 'bob' })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const target = (reply.body['uuids'] as string[])[0]

  const bridged = await h.waitFor('bob\'s channel bridged', () =>
    messages.find((m) => m.channel?.user_id === '2' && m.channel.state === 'bridged')?.channel,
  )
  t.same(bridged.end_user, endUser, 'bob\'s channel carries the customer\'s end_user')
  t.equal(bridged.other_uuid, target, 'bridged to the target leg')
  const targetSeen = messages.find((m) => m.channel?.uuid === target)?.channel
  t.same(targetSeen?.end_user, endUser, 'the target leg carries it too')
  t.same(
    messages.slice(1).map((m) => m.seq),
    messages.slice(1).map((_m, i) => i + 1),
    'info_event sequence numbers have no gap',
  )
  if (target !== undefined) h.daemon.simulator?.remoteHangup(target)
  await h.waitFor('removed', () => messages.some((m) => m.event === 'removed' && m.channel?.uuid === target))
})

t.test('wrong credentials get no WebSocket', async (t) => {
  const bad = `Basic ${Buffer.from('example.test:wrong-token-wrong-token').toString('base64')}`
  await t.rejects(subscribe('app_name=panel&user_name=bob', bad), /HTTP 401/)
})
