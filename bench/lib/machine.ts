/** Facts about the machine a result came from, written into every result file. */
import os from 'node:os'

export interface MachineFacts {
  readonly date: string
  readonly node: string
  readonly v8: string
  readonly platform: string
  readonly arch: string
  readonly cpus: number
  readonly cpu_model: string
  readonly total_memory_mb: number
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  readonly load_average_1m: number
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus()
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    cpus: cpus.length,
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    total_memory_mb: Math.round(os.totalmem() / 1024 / 1024),
    load_average_1m: Number((os.loadavg()[0] ?? 0).toFixed(2)),
  }
}
