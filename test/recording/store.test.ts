/**
 * The recording store (src/recording/store.ts): records on disk beside the audio, written
 * atomically, read back after a restart, listed newest first by cursor, deleted, swept by
 * retention at open and every hour (on a fake clock); hostile ids and links never reach a file
 * outside recording.dir.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { openRecordingStore, type RecordingStore } from '../../src/recording/store.js'
import { newRecordingId } from '../../src/recording/id.js'
import { silentLogger } from '../../src/util/logger.js'
import { withFakeClock } from '../support/fake-clock.js'
import { wavBytes } from './wav.js'

type T = Test
const DAY = 86_400_000
const DOMAIN = 'example.test'

function tempDir(t: T, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cod-rec-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function open(t: T, dir: string, retention: Record<string, number> = { [DOMAIN]: 30, 'other.test': 30 }): Promise<RecordingStore> {
  const opened = await openRecordingStore({ dir, logger: silentLogger(), retentionDaysOf: (d) => retention[d] })
  if (!opened.ok) throw new Error(opened.error)
  t.teardown(() => opened.value.close())
  return opened.value
}

const begin = (store: RecordingStore, over: Partial<Parameters<RecordingStore['begin']>[0]> = {}) =>
  store.begin({ id: newRecordingId(), requestId: 'req-1', domain: DOMAIN, legs: ['leg-a', 'leg-b'], startedAt: Date.now(), ...over })

/**
 * Lets the store's real file I/O run under the fake clock (its promises wait on real I/O, which
 * advancing the clock does not wait for) until `cond` holds; fails after 5 s of wall time.
 */
async function settled(what: string, cond: () => boolean): Promise<void> {
  const deadline = process.hrtime.bigint() + 5_000_000_000n
  while (!cond()) {
    if (process.hrtime.bigint() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** Every file under `dir`, relative. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()

t.test('begin writes the record beside where the audio goes; complete reads the audio', async (t) => {
  const dir = tempDir(t, 'life')
  const store = await open(t, dir)
  const id = newRecordingId()
  const begun = await begin(store, { id, domain: 'Example.TEST', startedAt: Date.parse('2026-01-02T03:04:05.678Z') })
  t.ok(begun.ok, 'begun')
  const file = store.recordingFile(DOMAIN, id)
  t.same(file, { ok: true, value: join(dir, DOMAIN, `${id}.wav`) }, 'the audio file, in the lower-case domain folder')
  const onDisk = JSON.parse(readFileSync(join(dir, DOMAIN, `${id}.json`), 'utf8')) as Record<string, unknown>
  t.same(onDisk, { id, requestId: 'req-1', domain: DOMAIN, legs: ['leg-a', 'leg-b'], startedAt: '2026-01-02T03:04:05.678Z', bytes: 0, format: 'wav', status: 'recording' })
  t.same(filesUnder(dir), [DOMAIN, `${DOMAIN}/${id}.json`], 'no temporary file left')
  t.match(await begin(store, { id }), { ok: false, error: /exists already/ }, 'an id is begun once')

  writeFileSync(join(dir, DOMAIN, `${id}.wav`), wavBytes(1500))
  const done = await store.complete(id)
  t.match(done, { ok: true, value: { status: 'completed', bytes: 44 + 8000 * 1.5 * 4, durationMs: 1500 } }, 'size from the file, duration from its header')
  t.same(await store.complete(id, { durationMs: 9 }), done, 'an ended recording stays as it ended')
  t.same(store.stats(), { started: 1, completed: 1, failed: 0, bytesWritten: 48044, onDisk: 1 })
  t.match(store.get('EXAMPLE.test', id), { status: 'completed' }, 'domains are case-insensitive')
  t.equal(store.get('other.test', id), undefined, "another domain's id is a missing one")
  t.match(await store.audio(DOMAIN, id), { path: join(dir, DOMAIN, `${id}.wav`), bytes: 48044 })
  t.equal(await store.audio('other.test', id), undefined)
})

t.test('a missing or empty file ends the recording failed, with the reason; fail says why', async (t) => {
  const dir = tempDir(t, 'fail')
  const store = await open(t, dir)
  const missing = await begin(store)
  const empty = await begin(store)
  const refused = await begin(store)
  const timed = await begin(store)
  if (!missing.ok || !empty.ok || !refused.ok || !timed.ok) return t.fail('begin')
  writeFileSync(join(dir, DOMAIN, `${empty.value.id}.wav`), wavBytes(0))
  writeFileSync(join(dir, DOMAIN, `${timed.value.id}.wav`), wavBytes(200))
  t.match(await store.complete(missing.value.id), { ok: true, value: { status: 'failed', bytes: 0, reason: 'no audio file was written' } })
  t.match(await store.complete(empty.value.id), { ok: true, value: { status: 'failed', bytes: 44, reason: /holds no audio/ } })
  t.match(await store.fail(refused.value.id, 'disk full'), { ok: true, value: { status: 'failed', reason: 'disk full' } })
  t.match(await store.complete(timed.value.id, { durationMs: 4321 }), { ok: true, value: { status: 'completed', durationMs: 4321 } }, "the call path's duration wins")
  t.equal(await store.audio(DOMAIN, missing.value.id), undefined, 'a failed recording has no audio')
  t.match(await store.complete(newRecordingId()), { ok: false, error: /no recording/ })
  t.same(store.stats(), { started: 4, completed: 1, failed: 3, bytesWritten: 44 + 1600 * 4, onDisk: 4 })
})

t.test('hostile ids and domains never make a file, and none outside the folder', async (t) => {
  const parent = tempDir(t, 'hostile')
  const dir = join(parent, 'recordings')
  const store = await open(t, dir)
  const hostile = ['../x', '..', '%2e%2e', '..%2fx', 'a\0b', 'x'.repeat(1000), 'ünïcødé', '/etc/passwd', '', newRecordingId().toUpperCase()]
  for (const id of hostile) {
    t.equal((await begin(store, { id })).ok, false, `id ${JSON.stringify(id.slice(0, 20))}`)
    t.equal(store.recordingFile(DOMAIN, id).ok, false, `recordingFile id ${JSON.stringify(id.slice(0, 20))}`)
    t.equal(store.get(DOMAIN, id), undefined)
    t.equal(await store.remove(DOMAIN, id), false)
  }
  for (const domain of ['..', '../etc', 'a/b', '%2e%2e', '', 'x\0']) {
    t.equal((await begin(store, { domain })).ok, false, `domain ${JSON.stringify(domain)}`)
    t.equal(store.recordingFile(domain, newRecordingId()).ok, false)
  }
  t.same(readdirSync(parent), ['recordings'], 'nothing beside the folder')
  t.same(filesUnder(dir), [], 'nothing in it either')
})

t.test('a symbolic link planted in the folder is never followed', async (t) => {
  const dir = tempDir(t, 'links')
  const outside = tempDir(t, 'outside')
  writeFileSync(join(outside, 'secret'), 'secret')
  const store = await open(t, dir)
  symlinkSync(outside, join(dir, 'evil.test'))
  t.equal((await begin(store, { domain: 'evil.test' })).ok, false, 'a domain folder that is a link out')
  t.same(readdirSync(outside), ['secret'], 'nothing written through it')
  // A completed recording whose audio is replaced by a link to a secret.
  const r = await begin(store)
  if (!r.ok) return t.fail('begin')
  writeFileSync(join(dir, DOMAIN, `${r.value.id}.wav`), wavBytes(100))
  await store.complete(r.value.id)
  rmSync(join(dir, DOMAIN, `${r.value.id}.wav`))
  symlinkSync(join(outside, 'secret'), join(dir, DOMAIN, `${r.value.id}.wav`))
  t.equal(await store.audio(DOMAIN, r.value.id), undefined, 'the audio is not served through the link')
  t.equal(await store.remove(DOMAIN, r.value.id), true, 'the recording is deleted')
  t.equal(readFileSync(join(outside, 'secret'), 'utf8'), 'secret', 'and the link target is untouched')
})

t.test('list: newest first, pages by cursor, another domain sees nothing; a restart keeps every record', async (t) => {
  const dir = tempDir(t, 'list')
  const store = await open(t, dir)
  // Recent: a restart's sweep keeps them (30 days).
  const base = Date.now() - 60_000
  const ids: string[] = []
  for (let i = 0; i < 7; i++) {
    const r = await begin(store, { startedAt: base + (i % 3) * 1000 })
    if (r.ok) ids.push(r.value.id)
  }
  await begin(store, { domain: 'other.test' })
  const all = store.list(DOMAIN, { limit: 100 })
  if (!all.ok) return t.fail(all.error)
  t.equal(all.value.recordings.length, 7, "only this domain's")
  t.equal(all.value.next, undefined, 'one page: no next')
  const order = all.value.recordings.map((r) => `${r.startedAt} ${r.id}`)
  t.same(order, [...order].sort().reverse(), 'newest first, ids descending within a time')
  const seen: string[] = []
  let after: string | undefined
  for (let page = 0; page < 10; page++) {
    const p = store.list(DOMAIN, { limit: 3, ...(after !== undefined ? { after } : {}) })
    if (!p.ok) return t.fail(p.error)
    seen.push(...p.value.recordings.map((r) => r.id))
    after = p.value.next
    if (after === undefined) break
  }
  t.same(seen, all.value.recordings.map((r) => r.id), 'the pages together are the list, none repeated')
  for (const bad of ['x', '../1.2', `99999999999999999999.${ids[0]}`, '1.NOT-AN-ID']) t.equal(store.list(DOMAIN, { limit: 3, after: bad }).ok, false, `cursor ${bad}`)
  t.same(store.list('nobody.test', { limit: 5 }), { ok: true, value: { recordings: [] } })

  store.close()
  const again = await open(t, dir)
  t.same(again.list(DOMAIN, { limit: 100 }), all, 'read back from the folder')
  t.equal(again.stats().onDisk, 8)
})

t.test('remove deletes audio and record; a completion after it brings nothing back', async (t) => {
  const dir = tempDir(t, 'remove')
  const store = await open(t, dir)
  const r = await begin(store)
  if (!r.ok) return t.fail('begin')
  const id = r.value.id
  writeFileSync(join(dir, DOMAIN, `${id}.wav`), wavBytes(300))
  t.equal(await store.remove('other.test', id), false, "another domain cannot delete it")
  const [removed, completed] = await Promise.all([store.remove(DOMAIN, id), store.complete(id)])
  t.equal(removed, true)
  t.equal(completed.ok, false, 'the completion queued behind the deletion finds nothing')
  t.same(filesUnder(join(dir, DOMAIN)), [], 'audio and record gone')
  t.equal(store.get(DOMAIN, id), undefined)
  t.equal(store.stats().onDisk, 0)
})

t.test('retention: at open and every hour, by the record\'s own days or its domain\'s, strays and leftovers too', async (t) => {
  const dir = tempDir(t, 'retention')
  await withFakeClock(async (clock) => {
    const store = await open(t, dir, { [DOMAIN]: 1, 'other.test': 5 })
    const old = await begin(store, { startedAt: clock.now() - 2 * DAY })
    t.equal(old.ok, true)
    store.close()
    // A restart: the sweep at open deletes what aged out while the daemon was away.
    const reopened = await open(t, dir, { [DOMAIN]: 1, 'other.test': 5 })
    t.equal(reopened.stats().onDisk, 0, 'the two-day-old record went at open')
    const plain = await begin(reopened)
    const kept = await begin(reopened, { retentionDays: 3 })
    const other = await begin(reopened, { domain: 'other.test' })
    if (!plain.ok || !kept.ok || !other.ok) return t.fail('begin')
    writeFileSync(join(dir, DOMAIN, `${plain.value.id}.wav`), wavBytes(100))
    const stray = newRecordingId()
    writeFileSync(join(dir, DOMAIN, `${stray}.wav`), wavBytes(100))
    writeFileSync(join(dir, DOMAIN, `${stray}.json.abc.tmp`), '{')
    const now = new Date(clock.now())
    for (const f of readdirSync(join(dir, DOMAIN))) utimesSync(join(dir, DOMAIN, f), now, now)
    writeFileSync(join(dir, DOMAIN, 'not-ours.txt'), 'left alone')

    await clock.advance(3_600_000)
    await settled('the first hourly sweep', () => !existsSync(join(dir, DOMAIN, `${stray}.json.abc.tmp`)))
    t.pass('an hour-old temporary file went at the first hourly sweep')
    t.ok(existsSync(join(dir, DOMAIN, `${stray}.wav`)), 'a young stray stays')
    await clock.advance(DAY)
    await reopened.sweep()
    t.equal(reopened.get(DOMAIN, plain.value.id), undefined, "a day later: gone by the domain's retention")
    t.notOk(existsSync(join(dir, DOMAIN, `${plain.value.id}.wav`)), 'with its audio')
    t.notOk(existsSync(join(dir, DOMAIN, `${stray}.wav`)), 'and the stray audio')
    t.ok(reopened.get(DOMAIN, kept.value.id), 'a record with three days of its own stays')
    t.ok(reopened.get('other.test', other.value.id), "another domain's five days too")
    t.ok(existsSync(join(dir, DOMAIN, 'not-ours.txt')), 'a file that is not ours is left alone')
    await clock.advance(2 * DAY)
    await settled('an hourly sweep past three days', () => reopened.get(DOMAIN, kept.value.id) === undefined)
    t.pass('three days: an hourly sweep took it')
    reopened.close()
    t.equal(clock.pending(), 0, 'close leaves no timer')
  })
})

t.test('a folder that cannot be made stops the opening, with the reason', async (t) => {
  const dir = tempDir(t, 'blocked')
  writeFileSync(join(dir, 'file'), 'in the way')
  const opened = await openRecordingStore({ dir: join(dir, 'file', 'recordings'), logger: silentLogger(), retentionDaysOf: () => 30 })
  t.match(opened, { ok: false, error: /file, not a folder/ })
})
