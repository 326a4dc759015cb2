import t, { type Test } from 'tap'
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openJournal } from '../../src/journal/index.js'
import type { Journal } from '../../src/journal/types.js'
import { withFakeClock } from '../support/fake-clock.js'
import { flush } from '../support/wait.js'
import { accepted, captureLogs, resultOf, tempDir } from './helpers.js'

const open = async (dir: string, extra: { compactMinBytes?: number; now?: () => number } = {}) => {
  const logs = captureLogs()
  const r = await openJournal({ dir, logger: logs.logger, ...extra })
  if (!r.ok) throw new Error(r.error)
  return { j: r.value, lines: logs.lines }
}

const segments = (dir: string): string[] => readdirSync(dir).filter((n) => /^segment-\d+\.log$/.test(n))
const onlySegment = (dir: string): string => {
  const s = segments(dir)
  if (s.length !== 1) throw new Error(`expected one segment, found ${s.join(', ')}`)
  return join(dir, s[0] as string)
}

async function fill(j: Journal): Promise<void> {
  await Promise.all([
    j.accepted(accepted(1)), // open: no result
    j.accepted(accepted(2, { callbackUrl: undefined })),
    j.accepted(accepted(3)),
    j.accepted(accepted(4)),
    j.accepted(accepted(5)),
  ])
  await j.ended('req-2') // no callback, over
  await j.result(resultOf(3)) // pending, never tried
  await j.result(resultOf(4))
  await j.attempted('delivery-4', { attempts: 2, nextAttemptAt: 1_700_000_100_000, giveUpAt: 1_700_086_400_000 })
  await j.result(resultOf(5))
  await j.deadLetter('delivery-5', 'HTTP 404', 1)
}

/** A journal folder holding what fill() wrote, closed: the folder and its one segment. */
async function filledSegment(t: Test): Promise<{ dir: string; file: string }> {
  const dir = tempDir(t)
  const a = await open(dir)
  await fill(a.j)
  await a.j.close()
  return { dir, file: onlySegment(dir) }
}

/** Appends half of a real record, without its newline: what a crash during write() leaves. */
function tearLastRecord(file: string): void {
  const line = readFileSync(file, 'utf8').split('\n')[0] as string
  appendFileSync(file, line.slice(0, Math.floor(line.length / 2)))
}

t.test('replay after a reopen: open requests, pending results with their schedule, dead letters', async (t) => {
  const dir = tempDir(t)
  const first = await open(dir)
  await fill(first.j)
  await first.j.close()

  const { j } = await open(dir)
  t.teardown(() => j.close())
  const r = j.replay()
  t.same(r.openRequests.map((o) => o.requestId), ['req-1'])
  t.equal(r.openRequests[0]?.uuids[0], accepted(1).uuids[0])
  t.equal(r.openRequests[0]?.callbackUrl, 'https://app.example.test/cb')
  t.same(
    r.pendingResults.map((p) => [p.result.deliveryId, p.result.body, p.progress?.attempts]),
    [
      ['delivery-3', resultOf(3).body, undefined],
      ['delivery-4', resultOf(4).body, 2],
    ],
  )
  t.equal(r.pendingResults[1]?.progress?.nextAttemptAt, 1_700_000_100_000)
  t.same(r.deadLetters.map((d) => [d.result.deliveryId, d.reason, d.attempts]), [['delivery-5', 'HTTP 404', 1]])
  t.equal(j.stats().deadLetters, 1)
  t.equal(segments(dir).length, 1, 'one segment')
  t.equal(statSync(onlySegment(dir)).mode & 0o777, 0o600, 'records hold callback URLs: owner only')
})

t.test('acked results and ended requests do not come back; a revived dead letter is pending again', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await fill(a.j)
  await a.j.acked('delivery-3')
  await a.j.acked('delivery-4')
  await a.j.revived('delivery-5', 1_800_000_000_000)
  await a.j.result(resultOf(1))
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  const r = j.replay()
  t.same(r.openRequests, [], 'req-1 ended by its result')
  t.same(r.pendingResults.map((p) => [p.result.deliveryId, p.progress?.giveUpAt]), [
    ['delivery-5', 1_800_000_000_000],
    ['delivery-1', undefined],
  ])
  t.same(r.deadLetters, [])
})

t.test('a result recorded before its accepted record leaves no open request', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.j.result(resultOf(7))
  await a.j.accepted(accepted(7))
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests, [])
  t.equal(j.replay().pendingResults.length, 1)
})

t.test('a torn last record (crash mid-write) is skipped with a warning; the rest is read; nothing moved aside', async (t) => {
  const { dir, file } = await filledSegment(t)
  tearLastRecord(file)
  const { j, lines } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests.map((o) => o.requestId), ['req-1'])
  t.equal(j.replay().pendingResults.length, 2)
  t.ok(lines.some((l) => l['level'] === 40 && String(l['msg']).includes('torn last record')))
  t.notOk(lines.some((l) => l['level'] === 50), 'no error: a torn tail is expected after a crash')
  t.same(readdirSync(dir).filter((n) => n.includes('corrupt')), [])
})

t.test('a start goes on appending to the one segment it read whole: no rewrite, and what follows is read back after it', async (t) => {
  const { dir, file } = await filledSegment(t)
  const before = readFileSync(file, 'utf8')
  const b = await open(dir)
  t.equal(onlySegment(dir), file, 'the same segment')
  t.equal(readFileSync(file, 'utf8'), before, 'not rewritten: the start wrote nothing')
  t.equal(b.j.stats().segmentBytes, Buffer.byteLength(before))
  t.ok(b.lines.some((l) => l['msg'] === 'journal opened' && l['continued'] === true))
  await b.j.result(resultOf(1))
  await b.j.close()
  t.ok(readFileSync(file, 'utf8').startsWith(before), 'appended after what was there')
  const { j, lines } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests, [], 'req-1 ended by the result appended after the restart')
  t.same(j.replay().pendingResults.map((p) => p.result.deliveryId), ['delivery-3', 'delivery-4', 'delivery-1'])
  t.notOk(lines.some((l) => Number(l['level']) >= 40), 'nothing to warn about')
})

t.test('a torn last record is cut off before the next append, which is then read back whole', async (t) => {
  const { dir, file } = await filledSegment(t)
  const whole = readFileSync(file)
  tearLastRecord(file)
  const b = await open(dir)
  t.same(readFileSync(file), whole, 'the torn bytes are gone from the segment')
  await b.j.result(resultOf(1))
  await b.j.close()
  const { j, lines } = await open(dir)
  t.teardown(() => j.close())
  t.notOk(lines.some((l) => Number(l['level']) >= 40), 'no torn, unreadable or corrupt record on the next start')
  t.same(j.replay().openRequests, [])
  t.equal(j.replay().pendingResults.length, 3)
  t.same(readdirSync(dir).filter((n) => n.includes('corrupt')), [])
})

t.test('a continued segment of mostly dead records is compacted once it has grown', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir, { compactMinBytes: 16 * 1024 })
  // 40 requests ended and acked (120 dead records), 2 left open: not yet compacted.
  await Promise.all(
    Array.from({ length: 40 }, async (_, n) => {
      await a.j.accepted(accepted(n))
      await a.j.result(resultOf(n))
      await a.j.acked(`delivery-${n}`)
    }),
  )
  for (let i = 0; i < 2; i++) await a.j.accepted(accepted(10_000 + i))
  t.equal(a.j.stats().compactions, 0)
  await a.j.close()
  const b = await open(dir, { compactMinBytes: 16 * 1024 })
  const continued = b.j.stats().segmentBytes
  t.ok(continued > 8 * 1024, `continued with its dead records (${continued} bytes)`)
  for (let round = 0; round < 10 && b.j.stats().compactions === 0; round++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => b.j.accepted(accepted(20_000 + round * 20 + i)).then(() => b.j.ended(`req-${20_000 + round * 20 + i}`))))
  }
  t.equal(b.j.stats().compactions, 1, 'compacted after about compactMinBytes more')
  t.ok(b.j.stats().segmentBytes < continued, `${b.j.stats().segmentBytes} bytes after`)
  await b.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests.map((o) => o.requestId).sort(), ['req-10000', 'req-10001'])
})

t.test('a corrupt segment is moved aside with an error log; its valid records are kept; the journal opens', async (t) => {
  const { dir, file } = await filledSegment(t)
  const text = readFileSync(file, 'utf8').split('\n')
  // Damage one byte inside the 3rd record (not the last): a checksum mismatch mid-file.
  const bad = text[2] as string
  text[2] = bad.slice(0, 20) + (bad[20] === 'x' ? 'y' : 'x') + bad.slice(21)
  writeFileSync(file, text.join('\n'))
  const { j, lines } = await open(dir)
  t.teardown(() => j.close())
  t.ok(lines.some((l) => l['level'] === 50 && String(l['msg']).includes('unreadable record')))
  t.ok(lines.some((l) => l['level'] === 50 && String(l['msg']).includes('moved aside')))
  const aside = readdirSync(dir).filter((n) => n.includes('.corrupt-'))
  t.equal(aside.length, 1, 'kept for the operator')
  t.equal(segments(dir).length, 1)
  // Records other than the damaged one are still there.
  t.equal(j.replay().pendingResults.length + j.replay().deadLetters.length + j.replay().openRequests.length >= 3, true)
})

t.test('a segment of garbage does not stop the start', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'segment-0000000001.log'), Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x41, 0x0a]))
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests, [])
  t.equal(readdirSync(dir).filter((n) => n.includes('.corrupt-')).length, 1)
})

t.test('a folder that cannot be created is an error value, not a throw', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'file'), 'x')
  const r = await openJournal({ dir: join(dir, 'file', 'journal'), logger: captureLogs().logger })
  t.equal(r.ok, false)
})

t.test('group commit: 1,000 concurrent appends resolve after a handful of fsyncs, and all are durable', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const before = a.j.stats().commits
  await Promise.all(Array.from({ length: 1000 }, (_, i) => a.j.accepted(accepted(i))))
  const commits = a.j.stats().commits - before
  t.ok(commits >= 1 && commits <= 10, `1,000 appends, ${commits} fsyncs`)
  t.equal(a.j.stats().appended, 1000)
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.equal(j.replay().openRequests.length, 1000)
})

t.test('appends resolve only once written: a reader right after sees the record', async (t) => {
  const dir = tempDir(t)
  const { j } = await open(dir)
  t.teardown(() => j.close())
  await j.result(resultOf(9))
  t.match(readFileSync(onlySegment(dir), 'utf8'), /delivery-9/)
})

t.test('compaction: the segment stays bounded, dead records go, live ones survive', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir, { compactMinBytes: 16 * 1024 })
  // 2,000 requests that end (dead records) and 5 that stay open, in rounds so that batches commit.
  for (let round = 0; round < 20; round++) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const n = round * 100 + i
        await a.j.accepted(accepted(n))
        await a.j.result(resultOf(n))
        await a.j.acked(`delivery-${n}`)
      }),
    )
  }
  for (let i = 0; i < 5; i++) await a.j.accepted(accepted(10_000 + i))
  t.ok(a.j.stats().compactions > 0, `${a.j.stats().compactions} compactions`)
  t.ok(a.j.stats().segmentBytes < 64 * 1024, `segment ${a.j.stats().segmentBytes} bytes`)
  t.equal(segments(dir).length, 1, 'the old segment was removed')
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests.map((o) => o.requestId).sort(), [0, 1, 2, 3, 4].map((i) => `req-${10_000 + i}`))
  t.same(j.replay().pendingResults, [])
})

t.test('a crash between a compaction and the removal of the old segment: both read, nothing doubled', async (t) => {
  const { dir, file } = await filledSegment(t)
  // The state a crash leaves: the old segment still there beside the new one.
  writeFileSync(join(dir, 'segment-0000000000.log'), readFileSync(file))
  writeFileSync(join(dir, 'segment-0000000999.log.tmp'), 'half a compaction')
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests.map((o) => o.requestId), ['req-1'])
  t.equal(j.replay().pendingResults.length, 2)
  t.equal(j.replay().deadLetters.length, 1)
  t.same(readdirSync(dir).filter((n) => n !== 'lock').length, 1, 'old segments and the interrupted temporary file are gone')
})

t.test('idempotency keys come back for 24 h, also after the request ended; then they are forgotten', async (t) => {
  const dir = tempDir(t)
  let now = 1_700_000_000_000
  const a = await open(dir, { now: () => now })
  const idem = { key: 'k-1', bodyDigest: 'abc', reply: '{"result_code":0,"uuids":["u"]}' }
  await a.j.accepted(accepted(1, { idempotency: idem }))
  await a.j.ended('req-1')
  await a.j.close()
  now += 23 * 3600 * 1000
  const b = await open(dir, { now: () => now })
  t.same(b.j.replay().idempotencyKeys.map((k) => [k.domain, k.fields.key, k.fields.reply]), [['example.test', 'k-1', idem.reply]])
  t.same(b.j.replay().openRequests, [])
  await b.j.close()
  now += 2 * 3600 * 1000
  const c = await open(dir, { now: () => now })
  t.teardown(() => c.j.close())
  t.same(c.j.replay().idempotencyKeys, [])
})

t.test('body bytes round-trip exactly, line separators and all', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const body = '{"result_code":500,"error":{"id":"failed","cause":"A\u2028B\u2029C\\n\u00e9\ud83d\ude00"}}'
  await a.j.result(resultOf(1, { body }))
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.equal(j.replay().pendingResults[0]?.result.body, body)
})

t.test('the disabled journal writes nothing and replays nothing', async (t) => {
  const dir = tempDir(t)
  const r = await openJournal({ dir: join(dir, 'j'), logger: captureLogs().logger, enabled: false })
  if (!r.ok) throw new Error(r.error)
  await r.value.accepted(accepted(1))
  t.same(readdirSync(dir), [])
  t.same(r.value.replay().openRequests, [])
})

t.test('one daemon per folder: a live owner is refused, a dead one (crash) is taken over', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const second = await openJournal({ dir, logger: captureLogs().logger })
  t.equal(second.ok, false, 'refused while the first is open')
  await a.j.close()
  t.notOk(existsSync(join(dir, 'lock')), 'released at close')
  // Another process that lives (the test runner that started this one) holds it.
  writeFileSync(join(dir, 'lock'), `${process.ppid}\n`)
  const third = await openJournal({ dir, logger: captureLogs().logger })
  t.equal(third.ok, false)
  if (!third.ok) t.match(third.error, /in use by the process/)
  // A lock left by a process that no longer exists (PID 2^22 + 1 is above Linux's pid_max).
  writeFileSync(join(dir, 'lock'), `${4194305}\n`)
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.pass('a stale lock is taken over')
})

t.test('ended() after a result writes nothing; ended() alone ends a request without a callback', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.j.accepted(accepted(1))
  await a.j.result(resultOf(1))
  const before = a.j.stats().appended
  await a.j.ended('req-1')
  t.equal(a.j.stats().appended, before, 'no second end')
  await a.j.accepted(accepted(2, { callbackUrl: undefined }))
  await a.j.ended('req-2')
  t.equal(a.j.stats().openRequests, 0)
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().openRequests, [])
})

t.test('accepted(): durable at once with a callback_url or an Idempotency-Key; without either, unhurried (types.ts acceptedIsUrgent)', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  const settled = (p: Promise<void>) => {
    const s = { done: false }
    void p.then(() => (s.done = true))
    return s
  }
  const commits = () => a.j.stats().commits

  // On the fake clock: "no write of its own for 50 ms" is proved by advancing 49 ms; "at once"
  // by a write that completes (real file I/O) while the clock stands still.
  await withFakeClock(async (clock) => {
    const quiet = async () => {
      await clock.advance(49)
      await flush()
    }
    const durable = (s: { done: boolean }, what: string) => clock.runUntil(what, () => s.done, () => false)
    // Neither: no write of its own for 50 ms.
    const before = commits()
    const plain = settled(a.j.accepted(accepted(1, { callbackUrl: undefined })))
    await quiet()
    t.equal(commits(), before, 'a request with neither starts no write')
    t.notOk(plain.done, 'and is not durable yet')
    // A request with a callback is written now, and the first one rides with it.
    await a.j.accepted(accepted(2))
    await Promise.resolve()
    t.equal(commits(), before + 1, 'one write for both')
    t.ok(plain.done, 'the first one rode with it')
    // A key alone makes it urgent too.
    const keyed = settled(a.j.accepted(accepted(3, { callbackUrl: undefined, idempotency: { key: 'k-3', bodyDigest: 'd-3', reply: '{}' } })))
    await durable(keyed, 'the keyed request durable with no time passing')
    t.ok(keyed.done, 'a request with an Idempotency-Key is durable at once')
    // Alone, the unhurried one goes out by itself within the delay.
    const alone = settled(a.j.accepted(accepted(4, { callbackUrl: undefined })))
    await clock.advance(50)
    await durable(alone, 'the unhurried request durable')
    t.ok(alone.done, 'alone, it goes out on its own within 50 ms')
  })
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(
    j.replay().openRequests.map((o) => o.requestId),
    ['req-1', 'req-2', 'req-3', 'req-4'],
    'all four are on the disk',
  )
})

t.test('intents: unsettled until accepted or unplaced, kept by compaction, back after a reopen', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir, { compactMinBytes: 16 * 1024 })
  const intent = (i: number) => {
    const { callbackUrl: _cb, ...rest } = accepted(i)
    return { ...rest, callbackUrl: 'https://app.example.test/cb', idempotency: { key: `key-${i}`, bodyDigest: `digest-${i}` } }
  }
  await Promise.all([a.j.intended(intent(1)), a.j.intended(intent(2)), a.j.intended(intent(3))])
  await a.j.accepted(accepted(2)) // placed and answered 200
  await a.j.unplaced('req-3') // refused after its intent
  // Enough traffic for compactions: the unsettled intent must survive them.
  for (let round = 0; round < 10; round++) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const n = 100 + round * 100 + i
        await a.j.intended(intent(n))
        await a.j.accepted(accepted(n))
        await a.j.result(resultOf(n))
        await a.j.acked(`delivery-${n}`)
      }),
    )
  }
  t.ok(a.j.stats().compactions > 0, `${a.j.stats().compactions} compactions`)
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  const r = j.replay()
  t.same(
    r.unsettledIntents.map((i) => [i.requestId, i.uuids, i.callbackUrl, i.idempotency]),
    [['req-1', accepted(1).uuids, 'https://app.example.test/cb', { key: 'key-1', bodyDigest: 'digest-1' }]],
    'only the intent with neither reply record',
  )
  t.same(r.openRequests.map((o) => o.requestId), ['req-2'])
  t.ok((r.unsettledIntents[0]?.intendedAt ?? 0) > 0, 'with the time it was written')
})

t.test('an intent read after its accepted record (a segment read twice) settles nothing again', async (t) => {
  const dir = tempDir(t)
  const a = await open(dir)
  await a.j.accepted(accepted(9))
  const { callbackUrl: _cb, ...rest } = accepted(9)
  await a.j.intended(rest)
  await a.j.close()
  const { j } = await open(dir)
  t.teardown(() => j.close())
  t.same(j.replay().unsettledIntents, [])
  t.same(j.replay().openRequests.map((o) => o.requestId), ['req-9'])
})
