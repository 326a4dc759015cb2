/**
 * The import rules of .dependency-cruiser.mjs (docs/architecture.md "Imports flow one way") can
 * fail: dependency-cruiser, run as `npm run lint:imports` runs it, over a small src/ tree with one
 * folder per part, allowed imports of every kind and one wrong import per rule. It must report
 * exactly the wrong ones. (`npm run lint:imports` checks the real src/ in CI.)
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** file → its imports (`type:` before a path: a type-only import). Each file exports one thing. */
const TREE: Record<string, string[]> = {
  // Allowed: every one of these is a rule's good case.
  'util/result.ts': [],
  'net/guard.ts': ['util/result.ts'],
  'config/schema.ts': ['net/guard.ts', 'journal/dir.ts'],
  'directory/directory.ts': ['config/schema.ts'],
  'runtime/store.ts': ['directory/directory.ts'],
  'pbx/commands.ts': ['runtime/store.ts'],
  'pbx/outgoing.ts': [],
  'pbx/esl-session.ts': ['pbx/outgoing.ts'],
  'pbx/connection.ts': ['pbx/esl-session.ts', 'pbx/outgoing.ts'],
  'channels/model.ts': ['pbx/commands.ts'],
  'recording/id.ts': ['directory/directory.ts'],
  'xmlcurl/leg.ts': ['channels/model.ts', 'recording/id.ts'],
  'ivr/runner.ts': ['xmlcurl/leg.ts'],
  'origination/engine.ts': ['ivr/runner.ts'],
  'journal/dir.ts': ['util/result.ts'],
  'callbacks/dispatcher.ts': ['origination/engine.ts', 'journal/dir.ts'],
  'api/app.ts': ['callbacks/dispatcher.ts', 'journal/dir.ts', 'recording/id.ts'],
  'cti/peers.ts': ['api/app.ts'],
  'cti/hub.ts': ['cti/peers.ts'],
  'metrics/index.ts': ['util/result.ts', 'type:pbx/commands.ts'],
  'cluster/index.ts': ['api/app.ts', 'cti/peers.ts', 'journal/dir.ts'],
  'sim/index.ts': ['config/schema.ts'],
  'ui/router.ts': ['util/result.ts'],
  'daemon.ts': ['cti/hub.ts', 'metrics/index.ts', 'cluster/index.ts', 'sim/index.ts', 'ui/router.ts'],
  'cli/start.ts': ['daemon.ts', 'sim/index.ts', 'type:origination/engine.ts'],
  'main.ts': ['cli/start.ts'],

  // Wrong, one per rule (the file's name says which).
  'util/bad-layers.ts': ['net/guard.ts'],
  'pbx/bad-layers.ts': ['api/app.ts'],
  'origination/bad-journal.ts': ['journal/dir.ts'],
  'journal/bad-side.ts': ['config/schema.ts'],
  'channels/bad-metrics.ts': ['metrics/index.ts'],
  'cti/bad-cluster.ts': ['cluster/index.ts'],
  'cluster/bad-cti.ts': ['cti/hub.ts'],
  'metrics/bad-value.ts': ['pbx/commands.ts'],
  'api/bad-daemon.ts': ['daemon.ts'],
  'origination/bad-session.ts': ['pbx/esl-session.ts'],
  'newpart/thing.ts': ['util/result.ts'],
  'channels/circle-a.ts': ['channels/circle-b.ts'],
  'channels/circle-b.ts': ['channels/circle-a.ts'],
}

/** Rule name and `from → to`, one per wrong import above. */
const EXPECTED = [
  'layers-util: util/bad-layers.ts → net/guard.ts',
  'layers-pbx: pbx/bad-layers.ts → api/app.ts',
  'layers-origination: origination/bad-journal.ts → journal/dir.ts',
  'layers-journal: journal/bad-side.ts → config/schema.ts',
  'layers-channels: channels/bad-metrics.ts → metrics/index.ts',
  'layers-cti: cti/bad-cluster.ts → cluster/index.ts',
  'layers-cluster: cluster/bad-cti.ts → cti/hub.ts',
  'layers-metrics-types-only: metrics/bad-value.ts → pbx/commands.ts',
  'layers-api: api/bad-daemon.ts → daemon.ts',
  'daemon-not-from-parts: api/bad-daemon.ts → daemon.ts',
  'esl-socket-only-in-the-link: origination/bad-session.ts → pbx/esl-session.ts',
  'part-not-placed: newpart/thing.ts → util/result.ts',
  'no-circular: channels/circle-a.ts → channels/circle-b.ts',
]

function writeTree(dir: string): void {
  for (const [file, imports] of Object.entries(TREE)) {
    const path = join(dir, 'src', file)
    mkdirSync(dirname(path), { recursive: true })
    const up = '../'.repeat(file.split('/').length - 1) || './'
    const lines = imports.map((imp, i) => {
      const typeOnly = imp.startsWith('type:')
      const target = `${up}${imp.replace(/^type:/, '').replace(/\.ts$/, '.js')}`
      return typeOnly ? `import type { x as x${i} } from '${target}'` : `import { x as x${i} } from '${target}'`
    })
    writeFileSync(path, `${lines.join('\n')}\nexport const x = 1\nexport const uses = [${imports.map((imp, i) => (imp.startsWith('type:') ? '' : `x${i}`)).filter((s) => s !== '').join(', ')}]\n`)
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
}

interface Violation {
  readonly rule: { readonly name: string }
  readonly from: string
  readonly to: string
}

t.test('each wrong import is reported by its rule, and nothing else is', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-imports-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeTree(dir)
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), 'src', '--config', join(ROOT, '.dependency-cruiser.mjs'), '--output-type', 'json'],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
      // It exits non-zero when it found violations: the JSON is on stdout all the same.
      (e, stdout) => (stdout === '' ? reject(e ?? new Error('no output')) : resolve(stdout)),
    ),
  )
  const result = JSON.parse(out) as { summary: { violations: Violation[] } }
  const named = (v: Violation) => `${v.rule.name}: ${v.from.replace(/^src\//, '')} → ${v.to.replace(/^src\//, '')}`
  const violations = result.summary.violations
  // Every wrong import between parts also closes a circle of folders (util → net → util...).
  const folderCircles = violations.filter((v) => v.rule.name === 'no-circular-folders').map(named)
  t.ok(folderCircles.includes('no-circular-folders: journal → config'), 'a folder circle is reported too')
  const found = violations.filter((v) => v.rule.name !== 'no-circular-folders').map(named)
  t.same(found.sort(), [...EXPECTED].sort())
})
