/** CPU time of a worker process over a stretch of work (its process.cpuUsage()). */
import type { Worker } from './procs.js'

interface Usage {
  readonly user: number
  readonly system: number
}

/** CPU milliseconds (user + system) between two readings of process.cpuUsage(). */
const usedMs = (a: Usage, b: Usage): number => Number(((b.user - a.user + b.system - a.system) / 1000).toFixed(1))

/** Runs `work` and returns its result with the CPU milliseconds each worker used meanwhile. */
export async function withCpu<T>(workers: Readonly<Record<string, Worker>>, work: () => Promise<T>): Promise<{ value: T; cpu_ms: Record<string, number> }> {
  const before: Record<string, Usage> = {}
  for (const [k, w] of Object.entries(workers)) before[k] = await w.call<Usage>('cpu')
  const value = await work()
  const cpu_ms: Record<string, number> = {}
  for (const [k, w] of Object.entries(workers)) {
    const a = before[k] ?? { user: 0, system: 0 }
    const b = await w.call<Usage>('cpu')
    cpu_ms[k] = usedMs(a, b)
  }
  return { value, cpu_ms }
}

/** Milliseconds of CPU per completed request. */
export const perRequest = (cpuMs: number | undefined, completed: number): number => Number(((cpuMs ?? NaN) / completed).toFixed(3))

/**
 * CPU of the workers between two instants of a load run (runLoad's `atWindow`): the measured
 * window only, without the warm-up. `cpu_ms()` after the window closed.
 */
export function cpuWindow(workers: Readonly<Record<string, Worker>>): { edge: (e: 'open' | 'close') => Promise<void>; cpu_ms: () => Record<string, number> } {
  const at: Record<'open' | 'close', Record<string, Usage>> = { open: {}, close: {} }
  return {
    edge: async (e) => {
      await Promise.all(Object.entries(workers).map(async ([k, w]) => (at[e][k] = await w.call<Usage>('cpu'))))
    },
    cpu_ms: () => {
      const out: Record<string, number> = {}
      for (const k of Object.keys(workers)) {
        const a = at.open[k]
        const b = at.close[k]
        out[k] = a === undefined || b === undefined ? NaN : usedMs(a, b)
      }
      return out
    },
  }
}
