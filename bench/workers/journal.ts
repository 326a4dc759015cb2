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
})
await ready({})
