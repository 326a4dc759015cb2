/**
 * `cod check-config`: loads a configuration exactly as the daemon does at start and on SIGHUP
 * (src/runtime/store.ts: the loader of src/config/ and the directory built from it), so an
 * operator can check a file before reloading. Every problem is printed with its file, key path
 * and reason; a file the daemon would accept passes, if the folders it writes (journal.dir) can
 * be written here (config/state-dirs.ts).
 */
import { resolve } from 'node:path'
import { loadConfig, type ConfigProblem, type LoadedConfig } from '../config/load.js'
import { stateDirProblems } from '../config/state-dirs.js'
import { runtimeOf } from '../runtime/store.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, usageError, type CliIo, type ExitCode } from './io.js'

const CHECK_CONFIG_USAGE = `usage: cod check-config <daemon.yaml>

Loads the daemon's file and every domain file of its \`directory\` with the daemon's own loader
and prints each problem as "<file>: <key path>: <reason>" (the lines a refused start or reload
logs). Deprecated keys the daemon would warn about are printed as warnings. The folders the
daemon writes (journal.dir) must be writable, or creatable, by the user running this command:
run it as the daemon's user, where the daemon runs.

Exit: 0 the daemon would accept the configuration; 1 problems found; 2 a wrong command line.
`

/** Keys the daemon accepts but warns about at start (src/callbacks/dispatcher.ts). */
function deprecations(config: LoadedConfig): string[] {
  const c = config.daemon.callbacks
  const out: string[] = []
  if (c.max_attempts !== undefined) out.push(`${config.file}: callbacks.max_attempts: deprecated and ignored (retries go on for callbacks.give_up_after_ms)`)
  if (c.spool_file !== undefined) out.push(`${config.file}: callbacks.spool_file: deprecated (a spool file found there is moved into the journal at start)`)
  if (!config.daemon.journal.enabled) out.push(`${config.file}: journal.enabled: false writes no journal (results pending at a crash are lost): for benchmarks only`)
  return out
}

const formatLine = (p: ConfigProblem): string => `${p.file}: ${p.path === '' ? '(file)' : p.path}: ${p.reason}`

export async function runCheckConfig(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseOrExit(io, CHECK_CONFIG_USAGE, argv, {}, true)
  if (!parsed.ok) return parsed.error
  const files = parsed.value.positionals
  if (files.length !== 1 || files[0] === undefined) return usageError(io, 'one configuration file is expected', CHECK_CONFIG_USAGE)
  const loaded = await loadConfig(files[0])
  if (!loaded.ok) {
    for (const p of loaded.error) io.stdout.write(`${formatLine(p)}\n`)
    io.stderr.write(`${loaded.error.length} problem${loaded.error.length === 1 ? '' : 's'}: the daemon would refuse this configuration\n`)
    return EXIT_PROBLEMS
  }
  // The directory is what the daemon builds from the files next; a throw there is a problem too.
  try {
    runtimeOf(loaded.value)
  } catch (e) {
    io.stdout.write(`${resolve(files[0])}: (directory): ${(e as Error).message}\n`)
    return EXIT_PROBLEMS
  }
  // A folder the daemon cannot write stops its start (the journal): as much a problem as a bad key.
  const unwritable = await stateDirProblems(loaded.value)
  if (unwritable.length > 0) {
    for (const p of unwritable) io.stdout.write(`${formatLine(p)}\n`)
    io.stderr.write(`${unwritable.length} problem${unwritable.length === 1 ? '' : 's'}: the daemon would not start with this configuration here\n`)
    return EXIT_PROBLEMS
  }
  for (const w of deprecations(loaded.value)) io.stderr.write(`warning: ${w}\n`)
  const domains = loaded.value.domains.map((d) => d.name)
  io.stdout.write(`${loaded.value.file}: ok (${domains.length} domain${domains.length === 1 ? '' : 's'}: ${domains.join(', ')})\n`)
  return EXIT_OK
}
