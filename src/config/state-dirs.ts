/**
 * The folders a configuration makes the daemon write (the result journal's `journal.dir`, the
 * recordings' `recording.dir`),
 * resolved as the daemon resolves them, and whether this host lets them be created and written:
 * `cod check-config` refuses a configuration the daemon could only fail to start with (a
 * container's read-only /etc/cod holding the default journal folder, docs/deploy.md).
 */
import { journalDirOf } from '../journal/index.js'
import { recordingDirOf } from './recording-dir.js'
import { folderProblem } from '../util/writable-folder.js'
import type { ConfigProblem, LoadedConfig } from './load.js'

export interface StateDir {
  /** The key that names it (`journal.dir`, also when the default applies). */
  readonly key: string
  readonly dir: string
}

/** @internal Exported for tests: test/cli checks where the image keeps its state. */
export function stateDirsOf(config: LoadedConfig): StateDir[] {
  const journal = config.daemon.journal
  const journalDir = journalDirOf(config.file, journal.dir)
  const recordings = { key: 'recording.dir', dir: recordingDirOf(config.file, config.daemon.recording.dir, journalDir) }
  // A journal switched off (benchmarks) writes nothing; recordings are kept all the same.
  return journal.enabled ? [{ key: 'journal.dir', dir: journalDir }, recordings] : [recordings]
}

/** One problem per state folder this process could not create or write (nothing is created). */
export async function stateDirProblems(config: LoadedConfig): Promise<ConfigProblem[]> {
  const problems: ConfigProblem[] = []
  for (const { key, dir } of stateDirsOf(config)) {
    const problem = await folderProblem(dir)
    if (problem !== undefined) problems.push({ file: config.file, path: key, reason: `${dir} ${problem}` })
  }
  return problems
}
