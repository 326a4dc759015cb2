/**
 * A request's status progress in the journal (journal/types.ts StatusFollowing): what the status
 * follower needs after a restart to go on with a call's events without a gap or a repeat. Built
 * from the `accepted` record's subscription and the status notices' marks; kept across compactions
 * (as one `following` record); forgotten at `followed`, and after FOLLOWING_TTL_MS.
 */
import t from 'tap'
import { openJournal } from '../../src/journal/index.js'
import { FOLLOWING_TTL_MS, type Journal, type NoticeFields } from '../../src/journal/types.js'
import { accepted, captureLogs, resultOf, tempDir } from './helpers.js'

const open = async (dir: string, extra: { compactMinBytes?: number; now?: () => number } = {}) => {
  const r = await openJournal({ dir, logger: captureLogs().logger, ...extra })
  if (!r.ok) throw new Error(r.error)
  return r.value
}

const STATUS = { url: 'https://app.example.test/status', events: ['initiated', 'ringing', 'answered', 'bridged', 'completed'] }
const LEG = '00000000-0000-4000-8000-000000000001'
const PEER = '00000000-0000-4000-8000-0000000000b0'

/** The status notice of event number `sequence` of request `req-<i>`. */
const statusNotice = (i: number, sequence: number, uuid: string, event: string) => {
  const notice: NoticeFields = { kind: 'status', order: { key: `status:req-${i}`, seq: sequence - 1 }, status: { uuid, event, sequence } }
  return { ...resultOf(i, { deliveryId: `status-${i}-${sequence}`, url: STATUS.url, body: JSON.stringify({ event, sequence }) }), notice }
}

async function tell(j: Journal, i: number, events: ReadonlyArray<readonly [string, string]>): Promise<void> {
  let n = 0
  for (const [uuid, event] of events) await j.notice(statusNotice(i, ++n, uuid, event))
}

/** 2,000 requests that end, in rounds so that batches commit: traffic enough for compactions (16 kB segments). */
async function churn(j: Journal): Promise<void> {
  for (let round = 0; round < 20; round++) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const n = 100 + round * 100 + i
        await j.accepted(accepted(n))
        await j.result(resultOf(n))
        await j.acked(`delivery-${n}`)
      }),
    )
  }
}

t.test('the subscription and each event handed over come back after a reopen', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.accepted(accepted(1, { status: STATUS }))
  await tell(a, 1, [
    [LEG, 'initiated'],
    [LEG, 'ringing'],
    [LEG, 'answered'],
    [PEER, 'initiated'],
  ])
  await a.acked('status-1-1') // delivered notices still count: the progress is what was handed over
  await a.accepted(accepted(2)) // no status_callback_url: nothing to follow
  await a.close()

  const b = await open(dir)
  t.teardown(() => b.close())
  t.same(b.replay().statusFollowing, [
    {
      requestId: 'req-1',
      domain: 'example.test',
      status: STATUS,
      origin: [LEG],
      sequence: 4,
      sent: [`${LEG} initiated`, `${LEG} ringing`, `${LEG} answered`, `${PEER} initiated`],
    },
  ])
})

t.test('a notice read before its accepted (the API appends it a moment later) still counts', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await tell(a, 3, [[LEG, 'initiated']])
  await a.accepted(accepted(3, { status: STATUS }))
  await a.close()
  const b = await open(dir)
  t.teardown(() => b.close())
  t.match(b.replay().statusFollowing, [{ requestId: 'req-3', status: STATUS, origin: accepted(3).uuids, sequence: 1, sent: [`${LEG} initiated`] }])
})

t.test('followed: forgotten, and a compaction brings it back neither from its accepted record nor from its pending notices', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir, { compactMinBytes: 16 * 1024 })
  // An Idempotency-Key keeps the accepted record for 24 h: its subscription must not open the progress again.
  await a.accepted(accepted(4, { status: STATUS, idempotency: { key: 'k-4', bodyDigest: 'd', reply: '{}' } }))
  await tell(a, 4, [[LEG, 'initiated'], [LEG, 'completed']])
  await a.result(resultOf(4))
  await a.followed('req-4')
  // One request still followed, then traffic enough for compactions.
  await a.accepted(accepted(5, { status: STATUS }))
  await tell(a, 5, [[PEER, 'initiated']])
  await churn(a)
  t.ok(a.stats().compactions > 0, `${a.stats().compactions} compactions`)
  await a.close()
  const b = await open(dir)
  t.teardown(() => b.close())
  const following = b.replay().statusFollowing ?? []
  t.same(following.map((f) => f.requestId), ['req-5'], 'only the request still followed, rebuilt from its compacted record')
  t.same(following[0]?.sent, [`${PEER} initiated`])
  t.equal(following[0]?.sequence, 1)
  t.ok(b.replay().idempotencyKeys.some((k) => k.requestId === 'req-4'), 'the key of the followed request is still kept')
})

t.test('a progress older than FOLLOWING_TTL_MS is dropped at the next compaction', async (t) => {
  const dir = tempDir(t)
  let now = 1_700_000_000_000
  const a = await open(dir, { compactMinBytes: 16 * 1024, now: () => now })
  await a.accepted(accepted(6, { status: STATUS }))
  await tell(a, 6, [[LEG, 'initiated']])
  now += FOLLOWING_TTL_MS + 1
  await churn(a)
  t.ok(a.stats().compactions > 0)
  await a.close()
  const b = await open(dir, { now: () => now })
  t.teardown(() => b.close())
  t.same(b.replay().statusFollowing, [], 'a call longer than that is not taken up')
})
