/**
 * The daemon code the workers run: src/ compiled by tsc with the build settings
 * (tsconfig.build.json), as operators run it (`npm start` runs dist/), into a cache folder of
 * its own (the repository's dist/ is left alone). Compiled code also gives CPU profiles real
 * function names and line numbers (tsx minifies whitespace: every frame would be on line 1).
 * Rebuilt when a file under src/ is newer than the last build. The files under src/ that are not
 * TypeScript (the live calls page's static files, src/ui/static/) are copied beside the output,
 * as the build does for dist/.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Inside node_modules so that the compiled files resolve the project's packages. */
const BUILD_DIR = join(ROOT, 'node_modules', '.cache', 'cod-bench', 'dist')

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)
  }
  return newest
}

/**
 * Returns the folder holding daemon.js & co, building it first when needed. BENCH_DIST names
 * another compiled tree instead (inside node_modules, so that it resolves the packages): side by
 * side runs of the code before a change, kept from an earlier build, against the code after it.
 */
export function ensureBuild(log: (line: string) => void): string {
  const other = process.env.BENCH_DIST
  if (other !== undefined && other !== '') {
    if (!existsSync(join(other, 'daemon.js'))) throw new Error(`BENCH_DIST=${other} holds no daemon.js`)
    log(`running the compiled tree in ${other} (BENCH_DIST), not src/`)
    return other
  }
  const marker = join(BUILD_DIR, 'daemon.js')
  const built = existsSync(marker) ? statSync(marker).mtimeMs : 0
  if (built > newestMtime(join(ROOT, 'src'))) return BUILD_DIR
  log(`building src/ into ${BUILD_DIR} (tsc -p tsconfig.build.json)`)
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', BUILD_DIR], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  // tsc emits even with type errors (another part may be mid-change); only a missing output is fatal.
  if (!existsSync(marker)) throw new Error(`build failed:\n${r.stdout}\n${r.stderr}`)
  cpSync(join(ROOT, 'src'), BUILD_DIR, { recursive: true, filter: (from) => statSync(from).isDirectory() || !from.endsWith('.ts') })
  if (r.status !== 0) log(`tsc reported type errors (the code was emitted anyway):\n${r.stdout.split('\n').slice(0, 10).join('\n')}`)
  return BUILD_DIR
}
