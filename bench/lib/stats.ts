/** Latency summaries: percentiles over the recorded samples (milliseconds). */

export interface LatencySummary {
  readonly count: number
  readonly mean_ms: number
  readonly p50_ms: number
  readonly p90_ms: number
  readonly p99_ms: number
  readonly max_ms: number
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

const round = (n: number, digits = 3): number => Number(n.toFixed(digits))

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort()
  const sum = sorted.reduce((a, b) => a + b, 0)
  return {
    count: sorted.length,
    mean_ms: round(sorted.length === 0 ? NaN : sum / sorted.length),
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.length === 0 ? NaN : (sorted[sorted.length - 1] as number)),
  }
}

/** `a / b` rounded, for "x times the baseline" figures. */
export const ratio = (a: number, b: number, digits = 3): number => round(b === 0 ? NaN : a / b, digits)

export { round }
