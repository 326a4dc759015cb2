/**
 * `npm run bench` (node --import tsx bench/run.ts): every benchmark in turn, each printing its
 * figures beside a baseline measured in the same run on the same machine, results written to
 * bench/results/<name>.json. Not part of `npm test`.
 *
 *   --only api,xmlcurl,scale,callbacks,journal,realfs,capacity,cluster,fanout,restart   run some of them (realfs: only
 *                                        where ../shared/freeswitch-dist/fs.sh is, cluster: only where
 *                                        redis-server is installed; else skipped)
 *   --only soak --minutes 10 [--rate 120] the soak (issue 32; only when named: 30 min by default), at
 *                                        60 % of the capacity it measures first, or at --rate
 *   --heap-snapshots DIR                 the soak also writes the daemon's heap after its warm-up and
 *                                        at its end into DIR (compare: bench/heap-diff.ts; the
 *                                        snapshots stop the daemon for a second or two: diagnosis,
 *                                        not figures)
 *   --quick                              short runs (checks the harness; results not written)
 *   --profile                            also write a CPU profile of the measured process of each
 *                                        benchmark and its summary to bench/results/<name>.profile.json
 *                                        (profiled figures are slower: they are not written as results)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { benchApi } from './api.js'
import { benchCallbacks } from './callbacks.js'
import { benchCapacity } from './capacity.js'
import { benchCluster } from './cluster.js'
import { benchJournal } from './journal.js'
import { benchRealfs } from './realfs.js'
import type { BenchContext, BenchOutput } from './context.js'
import { machineFacts } from './lib/machine.js'
import { summarizeProfile } from './lib/profile.js'
import { mainThreadProfile, setCodRoot } from './lib/procs.js'
import { ensureBuild } from './lib/build.js'
import { benchScale } from './scale.js'
import { benchSoak } from './soak.js'
import { benchFanout } from './fanout.js'
import { benchRestart } from './restart.js'
import { benchXmlCurl } from './xmlcurl.js'

const BENCHMARKS: Record<string, (ctx: BenchContext) => Promise<BenchOutput>> = {
  api: benchApi,
  xmlcurl: benchXmlCurl,
  scale: benchScale,
  callbacks: benchCallbacks,
  journal: benchJournal,
  realfs: benchRealfs,
  capacity: benchCapacity,
  cluster: benchCluster,
  fanout: benchFanout,
  restart: benchRestart,
  soak: benchSoak,
}
/** Run only when named in --only: the soak lasts 30 minutes by default. */
const ONLY_WHEN_NAMED = new Set(['soak'])

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    minutes: { type: 'string' },
    rate: { type: 'string' },
    'heap-snapshots': { type: 'string' },
  },
})
const positive = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!(n > 0)) throw new Error(`--${name} must be a positive number, not ${v}`)
  return n
}
const minutes = positive('minutes', values.minutes)
const rate = positive('rate', values.rate)
const names = values.only === undefined ? Object.keys(BENCHMARKS).filter((n) => !ONLY_WHEN_NAMED.has(n)) : values.only.split(',').map((s) => s.trim())
for (const n of names) if (!(n in BENCHMARKS)) throw new Error(`unknown benchmark ${n}; known: ${Object.keys(BENCHMARKS).join(', ')}`)

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url))
mkdirSync(resultsDir, { recursive: true })
const profileDir = values.profile === true ? mkdtempSync(join(tmpdir(), 'cod-bench-prof-')) : undefined
const machine = machineFacts()
const t0 = performance.now()
setCodRoot(ensureBuild((line) => process.stderr.write(`  . ${line}\n`)))
const out = (line: string) => process.stdout.write(`${line}\n`)
out(`machine: ${machine.cpus} x ${machine.cpu_model}, ${machine.total_memory_mb} MB, node ${machine.node}, load ${machine.load_average_1m}${values.quick === true ? ' (quick run)' : ''}${profileDir !== undefined ? ` (profiling into ${profileDir})` : ''}`)

let failed = false
for (const name of names) {
  const bench = BENCHMARKS[name]
  if (bench === undefined) continue
  const started = performance.now()
  const ctx: BenchContext = {
    quick: values.quick === true,
    profileDir,
    ...(minutes !== undefined ? { minutes } : {}),
    ...(rate !== undefined ? { rate } : {}),
    ...(values['heap-snapshots'] !== undefined ? { heapSnapshots: values['heap-snapshots'] } : {}),
    log: (line) => process.stderr.write(`  . ${line}\n`),
  }
  out(`\n== ${name}`)
  try {
    const r = await bench(ctx)
    for (const line of r.summary) out(`  ${line}`)
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
    if (profileDir !== undefined) {
      const files = Object.fromEntries(Object.entries(r.profiles ?? {}).map(([role, name]) => [role, mainThreadProfile(profileDir, name)]))
      const profiles = Object.fromEntries(Object.entries(files).map(([role, file]) => [role, summarizeProfile(file)]))
      writeFileSync(join(resultsDir, `${name}.profile.json`), `${JSON.stringify({ benchmark: name, machine, profiles, files }, null, 2)}\n`)
      for (const [role, p] of Object.entries(profiles)) {
        out(`  profile ${role}: busy ${p.busy_ms} ms; areas ${p.areas.slice(0, 6).map((a) => `${a.area} ${(a.share * 100).toFixed(1)}%`).join(', ')}`)
        for (const f of p.self.slice(0, 5)) out(`    self ${(f.share * 100).toFixed(1)}%  ${f.fn}`)
      }
    } else if (values.quick !== true) {
      writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify({ benchmark: name, machine, seconds, ...r.result }, null, 2)}\n`)
    }
    out(`  (${seconds} s)`)
  } catch (e) {
    failed = true
    out(`  FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
  }
}
out(`\nall done in ${((performance.now() - t0) / 1000).toFixed(1)} s${values.quick === true || profileDir !== undefined ? '' : `; results in ${resultsDir}`}`)
process.exit(failed ? 1 : 0)
