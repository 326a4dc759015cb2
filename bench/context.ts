/** What run.ts hands every benchmark. */
export interface BenchContext {
  /** Shorter runs (smoke test of the harness), figures not meant to be kept. */
  readonly quick: boolean
  /** When set, the measured process writes a CPU profile here (named after the benchmark). */
  readonly profileDir: string | undefined
  /** `--minutes N` (the soak's length) and `--rate R` (its call rate, instead of 60 % of the measured capacity). */
  readonly minutes?: number
  readonly rate?: number
  /** `--heap-snapshots DIR`: the soak writes the daemon's heap there after its warm-up and at its end (bench/heap-diff.ts compares them). */
  readonly heapSnapshots?: string
  /** Progress lines for the operator (stderr). */
  log(line: string): void
}

export interface BenchOutput {
  /** Figures, baselines and ratios: written to bench/results/<name>.json. */
  readonly result: Record<string, unknown>
  /** One line per figure for the console. */
  readonly summary: string[]
  /** CPU profiles written (by role: the profile name given to the worker), read once the workers exited. */
  readonly profiles?: Record<string, string>
}

export const dur = (ctx: BenchContext, ms: number): number => (ctx.quick ? Math.max(300, Math.round(ms / 5)) : ms)
