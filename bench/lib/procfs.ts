/**
 * What /proc says about a process that is not one of the harness's Node workers (FreeSWITCH) or
 * about a worker from outside (its open file descriptors): CPU time, resident memory, open fds.
 * Linux only; the benchmarks run there.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on every Linux of our targets). */
const TICKS_PER_S = 100

/** utime + stime of a process in ms (/proc/<pid>/stat fields 14 and 15; the name, field 2, may hold spaces). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S
}

/** Open file descriptors of a process (entries of /proc/<pid>/fd). */
export const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length
