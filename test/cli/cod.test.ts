/**
 * `cod` itself: the subcommand table, `--help` on every subcommand (exit 0, its usage on stdout)
 * and the usage mistakes (exit 2, the usage on stderr), and the built entry point's shebang.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { cod, codHere, ROOT } from './run-cod.js'

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

const SUBCOMMANDS = ['start', 'check-config', 'ivr', 'simulator', 'token', 'results', 'call'] as const

t.test('cod --help lists every subcommand and the exit codes', async (t) => {
  const r = await cod(['--help'])
  t.equal(r.code, 0)
  for (const name of SUBCOMMANDS) t.match(r.stdout, new RegExp(`^  ${name} `, 'm'), name)
  t.match(r.stdout, /0 done; 1 problems found .* 2 a wrong command line/s)
})

t.test('a missing or unknown command is a usage error (exit 2)', async (t) => {
  const [none, unknown, inherited] = [await codHere([]), await cod(['frobnicate']), await codHere(['constructor'])]
  t.equal(none?.code, 2)
  t.match(none?.stderr, /a command is expected[\s\S]*usage: cod <command>/)
  t.equal(unknown?.code, 2)
  t.match(unknown?.stderr, /unknown command "frobnicate"/)
  t.equal(unknown?.stdout, '')
  // A name of Object.prototype is no command either.
  t.equal(inherited?.code, 2)
})

t.test('--help on each subcommand: its usage with its exit codes, exit 0', async (t) => {
  const runs = await Promise.all(SUBCOMMANDS.map((name) => codHere([name, '--help'])))
  runs.forEach((r, i) => {
    const name = SUBCOMMANDS[i] as string
    t.equal(r.code, 0, `${name} --help exits 0`)
    t.match(r.stdout, new RegExp(`usage: cod ${name}`), `${name}: its usage`)
    t.match(r.stdout, /Exit: 0 .*;\s+1 .*;\s+2 a wrong command line/s, `${name}: its exit codes`)
  })
  const sim = runs[SUBCOMMANDS.indexOf('simulator')]
  t.notMatch(sim?.stdout ?? '', /dist\/sim\/main\.js/, 'the simulator usage names cod simulator')
})

t.test('an unknown option of a subcommand is a usage error (exit 2)', async (t) => {
  const cases = [['start', '--bogus'], ['check-config', '--bogus', 'x'], ['ivr', 'validate', '--bogus'], ['simulator', '--bogus'], ['token', 'hash', '--bogus'], ['results', 'list', '--bogus'], ['call', 'call_user', '--bogus']]
  // In this process: each subcommand checks its command line before it starts anything.
  const runs = await Promise.all(cases.map((args) => codHere(args)))
  runs.forEach((r, i) => {
    const args = (cases[i] ?? []).join(' ')
    t.equal(r.code, 2, args)
    t.match(r.stderr, /bogus/, `${args}: names the option`)
  })
})

t.test('the entry point starts with a shebang (package.json bin: dist/cli/cod.js)', async (t) => {
  t.match(readFileSync(join(ROOT, 'src/cli/cod.ts'), 'utf8'), /^#!\/usr\/bin\/env node\n/)
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string>; scripts: Record<string, string> }
  t.same(pkg.bin, { cod: 'dist/cli/cod.js' })
  t.match(pkg.scripts.start, /dist\/cli\/cod\.js start$/, 'npm start runs cod start')
})
