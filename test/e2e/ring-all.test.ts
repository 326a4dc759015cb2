/**
 * Issue 31 item 1 through the whole daemon on the simulator: a ring-all group (dave, who is not
 * registered; alice, two terminals; erin, two terminals) called over HTTP rings the four
 * registered terminals in one originate; alice's first terminal answers first and is bridged to
 * bob, the other three end LOSE_RACE, the callback names the winner, and CTI shows every leg
 * with the group. The same group asked to hunt rings one member at a time, as call_group did
 * before. The real switch's side: test/realfs/ring-all.ts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import WebSocket from 'ws'
import { DEMO_AUTH, startHarness, type Harness } from './harness.js'

interface CtiChannel {
  readonly uuid: string
  readonly state: string
  readonly user_id: string | null
  readonly group_id: string | null
  readonly hangup_cause: string | null
}
interface CtiMessage {
  readonly type: string
  readonly channel?: CtiChannel
}

let h: Harness
let dir: string

t.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cod-ring-all-'))
  await mkdir(join(dir, 'domains'))
  await writeFile(join(dir, 'daemon.yaml'), await readFile('conf/daemon.yaml', 'utf8'))
  const domain = (await readFile('conf/domains/example.test.yaml', 'utf8'))
    .replace(
      'groups:\n',
      [
        '  - { id: "5", name: erin, extension: "1005", password: erin-sip-secret,',
        '      sim: { terminals: [ { behaviour: no_answer }, { behaviour: no_answer } ] } }',
        'groups:',
        '  - { id: "12", name: ringers, extension: "2012", members: [ dave, alice, erin ],',
        '      answer_timeout: 30, member_answer_timeout: 5, strategy: ring_all, strategies: [ ring_all, hunt ] }',
        '',
      ].join('\n'),
    )
  await writeFile(join(dir, 'domains', 'example.test.yaml'), domain)
  h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
})
t.teardown(async () => {
  await h.close()
  await rm(dir, { recursive: true, force: true })
})

async function cti(): Promise<{ ws: WebSocket; messages: CtiMessage[] }> {
  const ws = new WebSocket(`${h.daemon.baseUrl.replace('http', 'ws')}/api/ws_cti?app_name=wallboard&full_events=true`, { headers: { authorization: DEMO_AUTH } })
  const messages: CtiMessage[] = []
  ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString()) as CtiMessage))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return { ws, messages }
}

const simChannel = (uuid: string) => h.daemon.simulator?.liveChannels().find((c) => c.uuid === uuid)
const resultFor = (uuids: readonly string[]) =>
  h.callbacks.find((c) => {
    const b = c.body as { uuid?: string; result_code?: number }
    return typeof b.result_code === 'number' && uuids.includes(b.uuid ?? '')
  })

t.test('ring_all: four terminals in one originate, the first answer bridged, the others LOSE_RACE', async (t) => {
  const { ws, messages } = await cti()
  t.teardown(() => ws.close())
  const commandsBefore = h.daemon.simulator?.commands.length ?? 0
  const reply = await h.post('call_group', { group_name: 'ringers', destination: 'bob', callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuids = reply.body['uuids'] as string[]
  t.equal(uuids.length, 4, 'one UUID per registered terminal: alice 2, erin 2, dave none')
  const originates = h.daemon.simulator?.commands.slice(commandsBefore).filter((c) => /\boriginate\b/.test(c.text)) ?? []
  t.equal(originates.length, 1, 'one originate for all of them')
  t.equal(originates[0]?.text.match(/sofia\/internal\/sip:(alice|erin)@/g)?.length, 4, "alice's and erin's terminals in its dial string")

  const cb = await h.waitFor('the result callback', () => resultFor(uuids), 10_000)
  const [alice1, ...others] = uuids as [string, ...string[]]
  t.same(cb.body, { result_code: 0, uuid: alice1 }, "the callback names alice's first terminal (answers after 1 s)")
  const winner = await h.waitFor('the winner bridged', () => (simChannel(alice1)?.bridgedTo !== undefined ? simChannel(alice1) : undefined), 10_000)
  t.match(simChannel(winner.bridgedTo ?? '')?.name, /bob@/, 'to bob')
  t.equal(winner.variables['cod_group_id'], '12')

  const hungUp = (uuid: string) => messages.find((m) => m.channel?.uuid === uuid && m.channel.state === 'hangup')?.channel
  for (const uuid of others) {
    const leg = await h.waitFor(`leg ${uuid.slice(0, 8)} hung up`, () => hungUp(uuid), 10_000)
    t.equal(leg.hangup_cause, 'LOSE_RACE', `${uuid.slice(0, 8)} (user ${leg.user_id}) lost the race`)
  }
  for (const uuid of uuids) {
    const seen = messages.filter((m) => m.channel?.uuid === uuid).map((m) => m.channel)
    t.ok(seen.length > 0, `CTI showed leg ${uuid.slice(0, 8)}`)
    t.ok(
      seen.every((c) => c?.group_id === '12'),
      `with the group on every message of it (${seen.map((c) => c?.group_id).join(',')})`,
    )
  }
  t.same(
    uuids.map((u) => messages.find((m) => m.channel?.uuid === u)?.channel?.user_id),
    ['1', '1', '5', '5'],
    "each leg is its member's",
  )
  h.daemon.simulator?.remoteHangup(alice1)
  await h.waitFor('the call ended', () => h.daemon.simulator?.liveChannels().length === 0, 10_000)
})

t.test('the same group asked to hunt: one member at a time, as before', async (t) => {
  const commandsBefore = h.daemon.simulator?.commands.length ?? 0
  const reply = await h.post('call_group', { group_name: 'ringers', destination: 'bob', strategy: 'hunt', callback_url: h.callbackUrl })
  t.equal(reply.status, 200, JSON.stringify(reply.body))
  const uuids = reply.body['uuids'] as string[]
  t.equal(uuids.length, 4, 'the reply lists every leg the hunt may create')
  const cb = await h.waitFor('the result callback', () => resultFor(uuids), 10_000)
  t.same(cb.body, { result_code: 0, uuid: uuids[0] }, 'alice, the first registered member, answers')
  const originates = h.daemon.simulator?.commands.slice(commandsBefore).filter((c) => /\boriginate\b/.test(c.text)) ?? []
  t.equal(originates.length, 1, 'one originate: alice answered in her turn')
  t.notMatch(originates[0]?.text ?? '', /erin@/, "erin's terminals never rang")
  h.daemon.simulator?.remoteHangup(uuids[0] ?? '')
  await h.waitFor('the call ended', () => h.daemon.simulator?.liveChannels().length === 0, 10_000)
})
