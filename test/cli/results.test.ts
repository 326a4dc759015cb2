/**
 * `cod results list | redeliver` on a real result journal (src/journal/), written here the way
 * the callback dispatcher writes it (a result, then its dead letter). `list` reads without the
 * lock and changes no file, so it works beside a running daemon; `redeliver` takes the lock
 * (src/journal/lock.ts), is refused while another live process holds it, and leaves the letter
 * pending again with its delivery id and body bytes, which is what a daemon's start delivers.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { openJournal } from '../../src/journal/index.js'
import type { ResultRecord } from '../../src/journal/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { cod, codHere, ROOT, tempDir } from './run-cod.js'

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

const result = (i: number, domain: string): ResultRecord => ({
  deliveryId: `d0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  requestId: `req-${i}`,
  domain,
  url: `https://hook-user:hook-secret@app.${domain}/cb`,
  body: `{"result_code":0,"request":${i}}`,
  createdAt: 1_790_000_000_000 + i,
})

const A = result(1, 'example.test')
const B = result(2, 'other.test')
const PENDING = result(3, 'example.test')

/** A daemon.yaml (with the shipped domains) whose journal.dir holds two dead letters and one pending result. */
async function journalFixture(t: Parameters<typeof tempDir>[0]): Promise<{ config: string; dir: string }> {
  const root = tempDir(t, 'results')
  const dir = join(root, 'journal')
  const opened = await openJournal({ dir, logger: silentLogger() })
  if (!opened.ok) throw new Error(opened.error)
  const j = opened.value
  for (const r of [A, B, PENDING]) await j.result(r)
  await j.deadLetter(A.deliveryId, 'HTTP 404', 1)
  await j.deadLetter(B.deliveryId, 'connection refused (gave up after 24 h)', 37)
  await j.close()
  const config = join(root, 'daemon.yaml')
  writeFileSync(config, `${readFileSync(join(ROOT, 'conf/daemon.yaml'), 'utf8')}\ndirectory: ${join(ROOT, 'conf/domains')}\njournal: { dir: journal }\n`.replace(/^directory: domains.*$/m, ''))
  return { config, dir }
}

async function replayOf(dir: string) {
  const opened = await openJournal({ dir, logger: silentLogger() })
  if (!opened.ok) throw new Error(opened.error)
  const replay = opened.value.replay()
  await opened.value.close()
  return replay
}

t.test('list: every dead letter with its id, domain, request, attempts, reason; credentials hidden; files untouched', async (t) => {
  const { config, dir } = await journalFixture(t)
  const before = readdirSync(dir).sort()
  const r = await cod(['results', 'list', '--config', config])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `${A.deliveryId}  example.test  request req-1`)
  t.match(r.stdout, /after 1 attempt: HTTP 404/)
  t.match(r.stdout, `${B.deliveryId}  other.test  request req-2`)
  t.match(r.stdout, /after 37 attempts: connection refused \(gave up after 24 h\)/)
  t.notMatch(r.stdout, PENDING.deliveryId, 'a pending result is no dead letter')
  t.notMatch(r.stdout, /hook-secret|hook-user/, 'no credentials of the callback_url')
  t.match(r.stderr, /2 dead letters in /)
  t.same(readdirSync(dir).sort(), before, 'no file created, renamed or removed')

  const json = await codHere(['results', 'list', '--journal', dir, '--domain', 'EXAMPLE.test', '--json'])
  t.equal(json.code, 0, json.stderr)
  const lines = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.equal(lines.length, 1, '--domain (case-insensitive) keeps that domain only')
  t.match(lines[0], { delivery_id: A.deliveryId, domain: 'example.test', request_id: 'req-1', attempts: 1, reason: 'HTTP 404', body: A.body })
  t.notMatch(String(lines[0]?.url), /hook-secret/)
})

t.test('list works while a daemon holds the journal (no lock taken); redeliver is refused then (one writer)', async (t) => {
  const { config, dir } = await journalFixture(t)
  // The lock of a live process that is not the command's: this test process stands for the daemon.
  writeFileSync(join(dir, 'lock'), `${process.pid}\n`)
  const [list, redeliver] = await Promise.all([codHere(['results', 'list', '--config', config]), cod(['results', 'redeliver', '--config', config, A.deliveryId])])
  t.equal(list.code, 0, list.stderr)
  t.match(list.stdout, A.deliveryId)
  t.equal(redeliver.code, 1)
  t.match(redeliver.stderr, new RegExp(`in use by the process ${process.pid}`))
  t.match(redeliver.stderr, /stop it, redeliver, then start it/)
  t.equal(readFileSync(join(dir, 'lock'), 'utf8'), `${process.pid}\n`, 'the lock is left to its owner')
})

t.test('redeliver: an unknown id changes nothing; a known one is pending again with its id and body, a fresh give-up window', async (t) => {
  const { config, dir } = await journalFixture(t)
  const unknown = await codHere(['results', 'redeliver', '--config', config, A.deliveryId, 'no-such-id'])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /no dead letter with delivery id no-such-id: nothing was changed/)
  t.equal((await replayOf(dir)).deadLetters.length, 2, 'still two dead letters')

  const started = Date.now()
  const r = await cod(['results', 'redeliver', '--config', config, A.deliveryId])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `${A.deliveryId}  example.test  request req-1: to be sent again`)
  t.match(r.stderr, /1 dead letter revived: the daemon sends them at its next start/)
  const replay = await replayOf(dir)
  t.same(replay.deadLetters.map((d) => d.result.deliveryId), [B.deliveryId], 'B is still dead')
  const revived = replay.pendingResults.find((p) => p.result.deliveryId === A.deliveryId)
  t.ok(revived, 'A is pending: the dispatcher sends what the journal holds pending at start')
  t.equal(revived?.result.body, A.body, 'the same body bytes')
  t.ok((revived?.progress?.giveUpAt ?? 0) >= started + 86_400_000, 'a fresh callbacks.give_up_after_ms window')
  t.notOk(readdirSync(dir).includes('lock'), 'the lock is released')

  const all = await codHere(['results', 'redeliver', '--config', config, '--all', '--domain', 'other.test'])
  t.equal(all.code, 0, all.stderr)
  t.equal((await replayOf(dir)).deadLetters.length, 0, '--all --domain revived the other one')
  const empty = await codHere(['results', 'list', '--config', config])
  t.equal(empty.stdout, '')
  t.match(empty.stderr, /0 dead letters/)
})

t.test('no journal: list says so (exit 0), redeliver fails (exit 1), journal.enabled false (exit 1)', async (t) => {
  const root = tempDir(t, 'results')
  const [list, redeliver] = await Promise.all([
    codHere(['results', 'list', '--journal', join(root, 'none')]),
    codHere(['results', 'redeliver', '--journal', join(root, 'none'), '--all']),
  ])
  t.equal(list.code, 0)
  t.match(list.stderr, /no journal at /)
  t.equal(redeliver.code, 1)
  t.same(readdirSync(root), [], 'no folder created')
  const config = join(root, 'daemon.yaml')
  writeFileSync(config, `${readFileSync(join(ROOT, 'conf/daemon.yaml'), 'utf8')}\njournal: { enabled: false }\n`.replace(/^directory: domains.*$/m, `directory: ${join(ROOT, 'conf/domains')}`))
  const off = await codHere(['results', 'list', '--config', config])
  t.equal(off.code, 1)
  t.match(off.stderr, /journal\.enabled is false/)
})

t.test('usage mistakes (exit 2)', async (t) => {
  const cases = [
    ['results'],
    ['results', 'purge'],
    ['results', 'redeliver'],
    ['results', 'redeliver', '--all', 'some-id'],
    ['results', 'redeliver', '--domain', 'example.test', 'some-id'],
    ['results', 'redeliver', '--json', '--all'],
    ['results', 'list', '--all'],
    ['results', 'list', 'extra'],
  ]
  const runs = await Promise.all(cases.map((args) => codHere(args)))
  runs.forEach((r, i) => t.equal(r.code, 2, (cases[i] ?? []).join(' ')))
})
