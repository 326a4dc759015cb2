/**
 * `node --import tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]`: what
 * a heap grew by between two snapshots of one process (the soak's `--heap-snapshots`), by kind
 * of object: node type and constructor or string class, with the count and the bytes of each
 * (self sizes) before and after, largest growth first. A set that keeps one entry per request
 * shows as a row growing by about the requests made between the snapshots.
 *
 * Reads V8's .heapsnapshot format (its `snapshot.meta` names the node fields), not only its
 * current field order. Strings are grouped by class (a request id, a uuid, other), not by
 * content, so that a million distinct ids make one row.
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] } }
  readonly nodes: number[]
  readonly strings: string[]
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A string's class: its shape, not its text. */
function stringClass(s: string): string {
  if (UUID.test(s)) return '<uuid>'
  if (/^[0-9a-f]{32}$/i.test(s)) return '<hex32>'
  if (s.includes('\n') && s.length < 300) return '<key with a newline>'
  return s.length > 40 ? '<long string>' : '<short string>'
}

function tally(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const width = fields.length
  const at = (name: string): number => {
    const i = fields.indexOf(name)
    if (i < 0) throw new Error(`${file}: no node field ${name}`)
    return i
  }
  const [typeAt, nameAt, sizeAt] = [at('type'), at('name'), at('self_size')]
  const out = new Map<string, { count: number; bytes: number }>()
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? '?'
    const name = snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '?'
    const key = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? `${type} ${stringClass(name)}` : `${type} ${name.slice(0, 60)}`
    const e = out.get(key) ?? { count: 0, bytes: 0 }
    e.count++
    e.bytes += snap.nodes[i + sizeAt] ?? 0
    out.set(key, e)
  }
  return out
}

const [beforeFile, afterFile, rowsArg] = process.argv.slice(2)
if (beforeFile === undefined || afterFile === undefined) {
  process.stderr.write('usage: node --import tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]\n')
  process.exit(2)
}
const before = tally(beforeFile)
const after = tally(afterFile)
const rows = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
  const b = before.get(key) ?? { count: 0, bytes: 0 }
  const a = after.get(key) ?? { count: 0, bytes: 0 }
  return { key, count: a.count - b.count, bytes: a.bytes - b.bytes, countAfter: a.count }
})
rows.sort((x, y) => y.bytes - x.bytes)
const total = rows.reduce((n, r) => n + r.bytes, 0)
process.stdout.write(`heap grew by ${total} bytes (self sizes)\n`)
for (const r of rows.slice(0, Number(rowsArg ?? 30))) {
  process.stdout.write(`${String(r.bytes).padStart(10)} B ${String(r.count).padStart(8)} objects (now ${r.countAfter})  ${r.key}\n`)
}
