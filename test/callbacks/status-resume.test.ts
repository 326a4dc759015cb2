/**
 * The status follower taking a request up after a restart (callbacks/status-events.ts `resume`):
 * from the journal's progress (StatusFollowing) and the channels FreeSWITCH still has once they are
 * read again, each leg's events go on without a gap or a repeat; a leg gone while the daemon was
 * away completes `ended_unobserved`; the request is `followed` once every leg has completed.
 * A fake channel model: the rules under test are the follower's, not the model's.
 */
import t from 'tap'
import type { ChannelChange, ChannelRecord } from '../../src/channels/index.js'
import { followStatusEvents } from '../../src/callbacks/status-events.js'
import type { StatusFollowing } from '../../src/journal/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { ok, type Result } from '../../src/util/result.js'

const A = '00000000-0000-4000-8000-00000000000a' // alice's terminal that answered
const L = '00000000-0000-4000-8000-00000000000c' // alice's other terminal (lost the race while the daemon was away)
const B = '00000000-0000-4000-8000-00000000000b' // bob's leg

const record = (uuid: string, over: Partial<ChannelRecord>): ChannelRecord => ({
  uuid,
  domain: 'example.test',
  state: 'bridged',
  stateAt: 1_700_000_010_000,
  answered: true,
  offerAt: 1_700_000_000_000,
  answerAt: 1_700_000_005_000,
  hangupAt: undefined,
  hangupCause: undefined,
  direction: 'outbound',
  callingName: undefined,
  callingNumber: undefined,
  calledNumber: undefined,
  otherUuid: undefined,
  requestId: 'req-1',
  operation: 'call_user',
  role: 'originator',
  userId: '1',
  gateway: false,
  endUser: undefined,
  peerEndUser: undefined,
  parties: [],
  peers: [],
  vars: {},
  seenSeq: 1,
  ...over,
})

function fakeChannels(records: ChannelRecord[]) {
  const byUuid = new Map(records.map((r) => [r.uuid, r]))
  const changeListeners = new Set<(c: ChannelChange) => void>()
  const resyncListeners = new Set<(startedAt: number) => void>()
  let resyncs = 0
  return {
    model: {
      get: (uuid: string) => byUuid.get(uuid),
      ofRequest: (requestId: string) => [...byUuid.values()].filter((r) => r.requestId === requestId),
      onChange(l: (c: ChannelChange) => void) {
        changeListeners.add(l)
        return () => changeListeners.delete(l)
      },
      onResynced(l: (startedAt: number) => void) {
        resyncListeners.add(l)
        return () => resyncListeners.delete(l)
      },
      resync: async (): Promise<Result<void, string>> => {
        resyncs++
        await Promise.resolve()
        for (const l of resyncListeners) l(0)
        return ok(undefined)
      },
    },
    resyncs: () => resyncs,
    change(c: ChannelChange) {
      if (c.kind === 'destroyed') byUuid.delete(c.channel.uuid)
      else byUuid.set(c.channel.uuid, c.channel)
      for (const l of changeListeners) l(c)
    },
  }
}

interface Sent {
  readonly body: Record<string, unknown>
  readonly mark: unknown
}

function follower(progress: StatusFollowing, channels: ReturnType<typeof fakeChannels>, settled: boolean) {
  const sent: Sent[] = []
  const followed: string[] = []
  const f = followStatusEvents({
    onAccepted: () => () => undefined,
    onOutcome: () => () => undefined,
    channels: channels.model,
    notify: (_domain, _url, body, meta) => sent.push({ body: JSON.parse(body) as Record<string, unknown>, mark: meta.status }),
    logger: silentLogger(),
    resume: { following: [progress], settled: () => settled },
    followed: (id) => followed.push(id),
    now: () => 1_700_000_099_000,
  })
  return { sent, followed, close: () => f.close() }
}

const ALL = { url: 'https://app.example.test/status', events: ['initiated', 'ringing', 'answered', 'bridged', 'completed'] }

t.test('killed while alice rang: the answer, the bridge and the lost race come after the restart, numbered on', async (t) => {
  const channels = fakeChannels([record(A, { otherUuid: B }), record(B, { role: 'destination', userId: '2', direction: 'inbound' })])
  const progress: StatusFollowing = {
    requestId: 'req-1',
    domain: 'example.test',
    status: ALL,
    origin: [A, L],
    sequence: 4,
    sent: [`${A} initiated`, `${L} initiated`, `${A} ringing`, `${L} ringing`],
  }
  const f = follower(progress, channels, true)
  t.teardown(f.close)
  await new Promise((r) => setImmediate(r))
  t.equal(channels.resyncs(), 1, 'FreeSWITCH\'s channels are read again before anything is told')
  const lines = f.sent.map((s) => `${String(s.body['sequence'])} ${String(s.body['uuid']).slice(-1)} ${String(s.body['event'])}`)
  t.same(lines, ['5 a answered', '6 a bridged', '7 b initiated', '8 b ringing', '9 b answered', '10 c completed'], 'each once, in a call\'s order, the sequence going on')
  const lost = f.sent.find((s) => s.body['uuid'] === L)?.body
  t.match(lost, { event: 'completed', ended_unobserved: true, hangup_cause: null, billsec: null, duration_s: null, hangup_by: null, answered_uuid: A }, 'the terminal gone while the daemon was away')
  t.same(f.sent[0]?.mark, { uuid: A, event: 'answered', sequence: 5 }, 'each notice carries its mark for the journal')
  t.same(f.followed, [], 'not over while two legs live')

  channels.change({ kind: 'destroyed', channel: record(A, { state: 'hangup', hangupAt: 1_700_000_020_000, hangupCause: 'NORMAL_CLEARING', peers: [B] }) })
  channels.change({ kind: 'destroyed', channel: record(B, { state: 'hangup', role: 'destination', hangupAt: 1_700_000_020_000, hangupCause: 'NORMAL_CLEARING', peers: [A] }) })
  t.same(
    f.sent.slice(6).map((s) => [s.body['sequence'], s.body['uuid'], s.body['event'], s.body['billsec']]),
    [
      [11, A, 'completed', 15],
      [12, B, 'completed', 15],
    ],
  )
  t.same(f.followed, ['req-1'], 'every leg completed: the journal may forget it')
})

t.test('nothing told twice: a leg whose completed was handed over before the kill', async (t) => {
  const channels = fakeChannels([])
  const progress: StatusFollowing = { requestId: 'req-1', domain: 'example.test', status: ALL, origin: [A], sequence: 5, sent: [`${A} initiated`, `${A} ringing`, `${A} answered`, `${A} completed`, `${B} initiated`] }
  const f = follower(progress, channels, true)
  t.teardown(f.close)
  await new Promise((r) => setImmediate(r))
  t.same(f.sent.map((s) => [s.body['sequence'], s.body['uuid'], s.body['event']]), [[6, B, 'completed']], 'only bob\'s end, unobserved')
  t.same(f.followed, ['req-1'])
})

t.test('a request whose result is not known yet waits for it before it is followed', async (t) => {
  const channels = fakeChannels([])
  const progress: StatusFollowing = { requestId: 'req-1', domain: 'example.test', status: ALL, origin: [A], sequence: 1, sent: [`${A} initiated`] }
  const f = follower(progress, channels, false)
  t.teardown(f.close)
  await new Promise((r) => setImmediate(r))
  t.same(f.sent.map((s) => s.body['event']), ['completed'])
  t.same(f.followed, [], 'recovery tells its result first (onOutcome)')
})
