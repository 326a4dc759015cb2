/**
 * The result journal (issue 11; docs/callbacks.md "Durability"): what the rest of the daemon
 * imports. openJournal picks the file journal or, only when switched off for a benchmark, the
 * null one.
 */
import { dirname, resolve } from 'node:path'
import type { Logger } from '../util/logger.js'
import { ok, type Result } from '../util/result.js'
import { openFileJournal } from './file-journal.js'
import { nullJournal } from './null-journal.js'
import type { Journal } from './types.js'

export type * from './types.js'
/** @internal Exported for tests: test/callbacks and test/cluster run without a journal. */
export { nullJournal } from './null-journal.js'

export interface OpenJournalOptions {
  /** The folder; relative paths are taken from the folder of daemon.yaml. */
  readonly dir: string
  readonly logger: Logger
  /** false: nothing is written (benchmark comparison only). */
  readonly enabled?: boolean
  readonly compactMinBytes?: number
  readonly now?: () => number
}

/** The folder used when `journal.dir` is not set: `journal` beside daemon.yaml. */
const defaultJournalDir = (configFile: string): string => resolve(dirname(configFile), 'journal')

/** The configured folder, relative paths taken from daemon.yaml's folder. */
export const journalDirOf = (configFile: string, dir: string | undefined): string =>
  dir === undefined ? defaultJournalDir(configFile) : resolve(dirname(configFile), dir)

export async function openJournal(opts: OpenJournalOptions): Promise<Result<Journal, string>> {
  if (opts.enabled === false) {
    opts.logger.warn('journal disabled (journal.enabled: false): results pending at a crash are lost; for benchmarks only')
    return ok(nullJournal())
  }
  return openFileJournal({
    dir: opts.dir,
    logger: opts.logger,
    ...(opts.compactMinBytes !== undefined ? { compactMinBytes: opts.compactMinBytes } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
  })
}
