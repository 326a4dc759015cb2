/**
 * The journal alone, measured in its own process: `n` accepted-request records appended by
 * `concurrency` loops that each wait for their record to be durable before the next (as API
 * requests do before their 200), with fsync and group commit as in production. The figure that
 * survives a loaded machine is the CPU per record; the fsyncs per record show the batching.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import type * as JournalModule from '../../src/journal/index.js'
import { ready, serve, str, wallMs } from './rpc.js'

const { openJournal } = (await import(`${str('codRoot')}/journal/index.js`)) as typeof JournalModule

serve({
  appends: async (m) => {
    const n = Number(m.n)
    const concurrency = Number(m.concurrency)
    const dir = mkdtempSync(join(tmpdir(), 'cod-bench-journal-alone-'))
    const opened = await openJournal({ dir, logger: pino({ level: 'silent' }) })
    if (!opened.ok) throw new Error(opened.error)
    const journal = opened.value
    let next = 0
    const cpu0 = process.cpuUsage()
    const t0 = wallMs()
    const loop = async () => {
      while (next < n) {
        next++
        const requestId = randomUUID()
        await journal.accepted({
          requestId,
          domain: 'bench.test',
          operation: 'call_user',
          uuids: [randomUUID()],
          callbackUrl: 'http://127.0.0.1:9/result',
          answerDeadlineAt: Date.now() + 60_000,
        })
      }
    }
    await Promise.all(Array.from({ length: concurrency }, loop))
    const ms = wallMs() - t0
    const cpu = process.cpuUsage(cpu0)
    const stats = journal.stats()
    await journal.close()
    rmSync(dir, { recursive: true, force: true })
    return { ms, cpu_user_ms: cpu.user / 1000, cpu_system_ms: cpu.system / 1000, appended: stats.appended, commits: stats.commits }
  },
  /**
   * The restart benchmark's journal (bench/restart.ts), written by the journal itself: `results`
   * pending results (recorded, never attempted) and `open` accepted requests (a 200 sent, no
   * result), each with a callback to `callbackUrl`. Appends are awaited in chunks, so that group
   * commit batches them as it would a busy daemon's.
   */
  fill: async (m) => {
    const dir = String(m.dir)
    const url = String(m.callbackUrl)
    const opened = await openJournal({ dir, logger: pino({ level: 'silent' }) })
    if (!opened.ok) throw new Error(opened.error)
    const journal = opened.value
    const t0 = wallMs()
    const CHUNK = 2000
    for (let done = 0; done < Number(m.results); done += CHUNK) {
      const n = Math.min(CHUNK, Number(m.results) - done)
      await Promise.all(Array.from({ length: n }, () => {
        const uuid = randomUUID()
        return journal.result({ deliveryId: randomUUID(), requestId: randomUUID(), domain: 'bench.test', url, body: JSON.stringify({ result_code: 0, uuid }), createdAt: Date.now() })
      }))
    }
    for (let done = 0; done < Number(m.open); done += CHUNK) {
      const n = Math.min(CHUNK, Number(m.open) - done)
      await Promise.all(Array.from({ length: n }, () =>
        journal.accepted({ requestId: randomUUID(), domain: 'bench.test', operation: 'call_user', uuids: [randomUUID()], callbackUrl: url, answerDeadlineAt: Date.now() + 60_000 }),
      ))
    }
    const stats = journal.stats()
    await journal.close()
    return { ms: wallMs() - t0, pending_results: stats.pendingResults, open_requests: stats.openRequests, segment_bytes: stats.segmentBytes }
  },
})
await ready({})
