/**
 * Summary of a V8 CPU profile (`node --cpu-prof`): where the non-idle time went, by function
 * (self and inclusive time) and by area (a src/ part, an npm package, Node internals, GC).
 */
import { readFileSync } from 'node:fs'

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: readonly number[]
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

export interface ProfileSummary {
  /** Non-idle sampled time, ms. */
  readonly busy_ms: number
  /** Share of busy time per area. */
  readonly areas: ReadonlyArray<{ area: string; share: number }>
  /** Functions with the most self time. */
  readonly self: ReadonlyArray<{ fn: string; share: number }>
  /** Functions (ours and libraries') with the most inclusive time. */
  readonly inclusive: ReadonlyArray<{ fn: string; share: number }>
}

function shortUrl(url: string): string {
  if (url === '') return ''
  const built = url.indexOf('cod-bench/dist/')
  // Compiled daemon code: named after its source file (tsc keeps names; lines are close to the source's).
  if (built >= 0) return `src/${url.slice(built + 'cod-bench/dist/'.length).replace(/\.js$/, '.ts')}`
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length)
  const src = url.search(/\/(src|bench|dist)\//)
  if (src >= 0) return url.slice(src + 1)
  return url.replace(/^file:\/\//, '')
}

function areaOf(f: CallFrame): string {
  const name = f.functionName
  if (name === '(garbage collector)' || name === '(program)' || name === '(idle)' || name === '(root)') return name
  const url = f.url
  const nm = url.includes('cod-bench/dist/') ? -1 : url.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/')
    return `npm:${rest[0]?.startsWith('@') === true ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '')}`
  }
  // The compiled daemon (node_modules/.cache/cod-bench/dist/<part>/...) is src/<part>.
  const src = /\/(?:src|cod-bench\/dist)\/([^/]+)\//.exec(url)
  if (src !== null) return `src/${src[1] ?? ''}`
  if (/\/(?:src|cod-bench\/dist)\/[^/]+\.[jt]s$/.test(url)) return 'src'
  if (url.startsWith('node:') || url === '') return url === '' ? 'native/V8' : `node:${url.slice(5).split('/')[0] ?? ''}`
  return 'other'
}

const keyOf = (f: CallFrame): string => `${f.functionName === '' ? '(anonymous)' : f.functionName} ${shortUrl(f.url)}${f.url === '' ? '' : `:${f.lineNumber + 1}`}`

export function summarizeProfile(file: string, top = 12): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const byId = new Map<number, ProfileNode>()
  const parent = new Map<number, number>()
  for (const n of p.nodes) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) parent.set(c, n.id)
  }
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const areas = new Map<string, number>()
  let busy = 0
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000
    const node = byId.get(id)
    if (node === undefined || node.callFrame.functionName === '(idle)') return
    busy += dt
    const k = keyOf(node.callFrame)
    self.set(k, (self.get(k) ?? 0) + dt)
    const a = areaOf(node.callFrame)
    areas.set(a, (areas.get(a) ?? 0) + dt)
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)
      if (n === undefined || n.callFrame.functionName === '(root)') continue
      const key = keyOf(n.callFrame)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt)
    }
  })
  const share = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => ({ k, share: Number((v / busy).toFixed(4)) }))
  return {
    busy_ms: Math.round(busy),
    areas: share(areas).map(({ k, share: s }) => ({ area: k, share: s })),
    self: share(self)
      .slice(0, top)
      .map(({ k, share: s }) => ({ fn: k, share: s })),
    // Only frames with a location (ours, libraries, Node): "(program)" and natives say little.
    inclusive: share(inclusive)
      .filter(({ k }) => /(src\/|node_modules|node:|[a-z-]+\/)/.test(k) && !/^\(anonymous\) node:internal\/(process\/task_queues|timers)/.test(k))
      .slice(0, top * 2)
      .map(({ k, share: s }) => ({ fn: k, share: s })),
  }
}
