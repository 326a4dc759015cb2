/**
 * Where the recordings are kept: `recording.dir` (relative paths from daemon.yaml's folder, like
 * every path of that file), by default a folder `recordings` beside the journal's folder, so that
 * a deployment that gave the journal a writable place (a volume, /var/lib/cod) finds its
 * recordings there too without another setting.
 */
import { dirname, resolve } from 'node:path'

/** `journalDir` is the journal's folder as resolved (journal/index.ts journalDirOf, or the daemon's override). */
export const recordingDirOf = (configFile: string, dir: string | undefined, journalDir: string): string =>
  dir === undefined ? resolve(dirname(resolve(journalDir)), 'recordings') : resolve(dirname(configFile), dir)
