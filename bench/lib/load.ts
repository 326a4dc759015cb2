/**
 * A closed-loop HTTP load generator: `concurrency` loops, each sending its next request as soon
 * as the previous reply arrived, over keep-alive connections (node:http, one socket per loop).
 * Requests started during the warm-up are not counted; the rate is the requests started after
 * it and completed before the deadline, divided by the measured duration.
 */
import { Agent, request } from 'node:http'
import { summarize, type LatencySummary } from './stats.js'

export interface LoadOptions {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The body of the i-th request (so that requests can differ, e.g. round-robin over users). */
  readonly body: (i: number) => string
  readonly concurrency: number
  readonly warmupMs: number
  readonly durationMs: number
  /** Whether a reply counts as a success (others are counted as errors, with their status). */
  readonly ok: (status: number, body: string) => boolean
  /**
   * Called when the measured window opens and when it closes (e.g. to read the measured
   * processes' CPU): so that CPU per request can leave out the warm-up, when the process starts,
   * V8 compiles and optimises, and the first connections are made.
   */
  readonly atWindow?: (edge: 'open' | 'close') => Promise<void>
}

export interface LoadResult {
  readonly concurrency: number
  readonly duration_s: number
  readonly requests: number
  /** Every reply received, warm-up included (for CPU per request over the whole run). */
  readonly completed_total: number
  /** Replies received while the measured window was open (for CPU per request in the window, `atWindow`). */
  readonly completed_in_window: number
  readonly errors: number
  readonly requests_per_s: number
  readonly latency: LatencySummary
  /** Status codes seen during the measurement (errors included). */
  readonly statuses: Record<string, number>
  /** First error reply bodies, to tell what went wrong. */
  readonly error_samples: string[]
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const url = new URL(o.url)
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency, maxFreeSockets: o.concurrency })
  const samples: number[] = []
  const statuses: Record<string, number> = {}
  const errorSamples: string[] = []
  let errors = 0
  let counter = 0
  let completed = 0
  let completedInWindow = 0
  const t0 = performance.now()
  const measureFrom = t0 + o.warmupMs
  const deadline = measureFrom + o.durationMs

  const once = (body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: 'POST',
          agent,
          headers: { ...o.headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })

  const loop = async () => {
    for (;;) {
      const start = performance.now()
      if (start >= deadline) return
      const body = o.body(counter++)
      let status = 0
      let text = ''
      try {
        ;({ status, text } = await once(body))
      } catch (e) {
        text = e instanceof Error ? e.message : String(e)
      }
      const end = performance.now()
      completed++
      if (end >= measureFrom && end <= deadline) completedInWindow++
      if (start < measureFrom || end > deadline) continue
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1
      if (o.ok(status, text)) samples.push(end - start)
      else {
        errors++
        if (errorSamples.length < 5) errorSamples.push(`${status} ${text.slice(0, 300)}`)
      }
    }
  }
  const edges: Promise<void>[] = []
  const atWindow = o.atWindow
  const timers =
    atWindow === undefined
      ? []
      : [setTimeout(() => edges.push(atWindow('open')), o.warmupMs), setTimeout(() => edges.push(atWindow('close')), o.warmupMs + o.durationMs)]
  await Promise.all(Array.from({ length: o.concurrency }, loop))
  // The last loop ends at the deadline at the earliest, so both edges have fired (or fire now).
  await new Promise((r) => setTimeout(r, Math.max(0, deadline - performance.now())))
  for (const tm of timers) clearTimeout(tm)
  await Promise.all(edges)
  agent.destroy()
  const duration = o.durationMs / 1000
  return {
    concurrency: o.concurrency,
    duration_s: duration,
    requests: samples.length,
    completed_total: completed,
    completed_in_window: completedInWindow,
    errors,
    requests_per_s: Number((samples.length / duration).toFixed(1)),
    latency: summarize(samples),
    statuses,
    error_samples: errorSamples,
  }
}
