/**
 * Where the faxes are: `ivr.fax_dir`, relative paths from daemon.yaml's folder like every path
 * of that file, `faxes` beside it by default. FreeSWITCH opens the files at the same path
 * (txfax/rxfax run on its host), so the folder must be the same on both sides (one host, or a
 * shared mount at the same place), as `recording.dir` is (docs/recording.md).
 */
import { dirname, resolve } from 'node:path'

const DEFAULT_FAX_DIR = 'faxes'

export const faxDirOf = (configFile: string, dir: string | undefined): string => resolve(dirname(configFile), dir ?? DEFAULT_FAX_DIR)
