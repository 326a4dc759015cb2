/** The worker side of bench/lib/procs.ts: arguments, the ready message, request handlers. */

export type Handler = (msg: Record<string, unknown>) => unknown

export const args = JSON.parse(process.env.BENCH_ARGS ?? '{}') as Record<string, unknown>

export function str(name: string): string {
  const v = args[name]
  if (typeof v !== 'string') throw new Error(`worker argument ${name} missing`)
  return v
}

export function num(name: string, fallback?: number): number {
  const v = args[name]
  if (typeof v === 'number') return v
  if (fallback !== undefined) return fallback
  throw new Error(`worker argument ${name} missing`)
}

const send = (m: unknown): Promise<void> => new Promise((resolve) => process.send?.(m, () => resolve()))

/**
 * Serves requests from the parent. `stop` runs `onStop`, answers, then exits 0 (so that a
 * --cpu-prof profile is written).
 */
export function serve(handlers: Record<string, Handler>, onStop: () => Promise<void> | void = () => {}): void {
  process.on('message', (m: Record<string, unknown>) => {
    const id = m.id
    const type = String(m.type)
    void (async () => {
      if (type === 'stop') {
        await onStop()
        await send({ id, ok: true })
        process.exit(0)
      }
      const h = handlers[type]
      try {
        if (h === undefined) throw new Error(`no handler ${type}`)
        await send({ id, ok: true, result: await h(m) })
      } catch (e) {
        await send({ id, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e) })
      }
    })()
  })
  // The parent went away: do not linger.
  process.on('disconnect', () => process.exit(0))
}

export const ready = (result: Record<string, unknown> = {}): Promise<void> => send({ type: 'ready', result })
export const failed = (error: string): Promise<void> => send({ type: 'failed', error })

/** Heap and resident memory after full collections (needs --expose-gc). */
export function memory(): NodeJS.MemoryUsage & { gc: boolean } {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) {
    gc()
    gc()
  }
  return { ...process.memoryUsage(), gc: gc !== undefined }
}

/** Epoch milliseconds comparable across processes on one machine. */
export const wallMs = (): number => performance.timeOrigin + performance.now()

/**
 * Counts the FreeSWITCH events a worker received, by name, with the wall time of the first and
 * last: `count(name)` per event, `snapshot()` for the `events` RPC, `reset()` between phases.
 */
export function eventCounter() {
  let counts = new Map<string, number>()
  let total = 0
  let first = 0
  let last = 0
  return {
    count(name: string): void {
      counts.set(name, (counts.get(name) ?? 0) + 1)
      total++
      last = wallMs()
      if (first === 0) first = last
    },
    snapshot: () => ({ total, first, last, byName: Object.fromEntries(counts) }),
    reset(): void {
      counts = new Map()
      total = 0
      first = 0
      last = 0
    },
  }
}
