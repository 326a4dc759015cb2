/**
 * Callback delivery, measured in its own process: the daemon's CallbackDispatcher (queues per
 * domain, signing, the delivered log line) and, as the baseline, a bare loop of fetch() calls
 * with the same concurrency, body and headers.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import type * as DispatcherModule from '../../src/callbacks/dispatcher.js'
import type * as JournalModule from '../../src/journal/index.js'
import { ready, serve, str, wallMs } from './rpc.js'

const { CallbackDispatcher } = (await import(`${str('codRoot')}/callbacks/dispatcher.js`)) as typeof DispatcherModule
const { openJournal } = (await import(`${str('codRoot')}/journal/index.js`)) as typeof JournalModule

const SECRET = 'bench-signing-secret-0123'

interface Run {
  readonly ms: number
  readonly cpu_user_ms: number
  readonly cpu_system_ms: number
}

async function measure(work: () => Promise<void>): Promise<Run> {
  const cpu0 = process.cpuUsage()
  const t0 = wallMs()
  await work()
  const ms = wallMs() - t0
  const cpu = process.cpuUsage(cpu0)
  return { ms, cpu_user_ms: cpu.user / 1000, cpu_system_ms: cpu.system / 1000 }
}

serve({
  dispatch: async (m) => {
    const url = String(m.url)
    const n = Number(m.n)
    const domains = Number(m.domains ?? 1)
    const concurrency = Number(m.concurrency)
    // The daemon logs every delivery at info: written like in production (here to /dev/null).
    const logger = pino({ level: 'info', base: { svc: 'cod' } })
    // The real journal, as in production: every result is fsynced (group commit) before its first attempt.
    const dir = mkdtempSync(join(tmpdir(), 'cod-bench-journal-'))
    const opened = await openJournal({ dir, logger })
    if (!opened.ok) throw new Error(opened.error)
    const journal = opened.value
    const d = new CallbackDispatcher({
      settings: () => ({ timeout_ms: 5000, give_up_after_ms: 86_400_000, backoff_initial_ms: 100, backoff_max_ms: 1000, concurrency_per_domain: concurrency, allow: ['127.0.0.1/32'] }),
      secretFor: () => SECRET,
      journal,
      logger,
    })
    await d.start()
    const run = await measure(async () => {
      for (let i = 0; i < n; i++) {
        d.deliver(`d${i % domains}.bench.test`, url, { result_code: 0, uuid: randomUUID() }, { requestId: randomUUID() })
      }
      // stats() walks the pending deliveries: polled every 20 ms so that the poll costs next to nothing.
      while (d.stats().delivered + d.stats().failed < n) await new Promise((r) => setTimeout(r, 20))
    })
    const stats = d.stats()
    await d.shutdown(1000)
    await journal.close()
    rmSync(dir, { recursive: true, force: true })
    return { ...run, delivered: stats.delivered, failed: stats.failed }
  },
  bare: async (m) => {
    const url = String(m.url)
    const n = Number(m.n)
    const concurrency = Number(m.concurrency)
    let sent = 0
    let delivered = 0
    const run = await measure(async () => {
      const worker = async () => {
        while (sent < n) {
          sent++
          const body = JSON.stringify({ result_code: 0, uuid: randomUUID() })
          const res = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'bench',
              'x-delivery-id': randomUUID(),
              'x-delivery-attempt': '1',
              'x-request-id': randomUUID(),
              'x-signature': 't=1700000000,v1=0000000000000000000000000000000000000000000000000000000000000000',
            },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(5000),
          })
          await res.arrayBuffer()
          if (res.status >= 200 && res.status < 300) delivered++
        }
      }
      await Promise.all(Array.from({ length: concurrency }, worker))
    })
    return { ...run, delivered, failed: n - delivered }
  },
})
await ready({})
