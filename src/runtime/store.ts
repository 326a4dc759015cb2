/**
 * The running configuration. SIGHUP calls reload(): a bad file keeps what runs and says why.
 * Readers call current() per request, so a reload takes effect for the next request while
 * calls in flight keep the records they resolved.
 *
 * It sits above both config/ (the files, validated) and directory/ (the indexes built from
 * them) because it holds the two together: config/ stays free of the directory it feeds.
 */
import { formatProblem, loadConfig, type LoadedConfig } from '../config/load.js'
import { Directory } from '../directory/directory.js'
import type { Result } from '../util/result.js'
import { err, ok } from '../util/result.js'

export interface Runtime {
  readonly config: LoadedConfig
  readonly directory: Directory
}

export const runtimeOf = (config: LoadedConfig): Runtime => ({ config, directory: new Directory(config.domains) })

export class ConfigStore {
  private runtime: Runtime
  private readonly listeners: Array<(r: Runtime) => void> = []

  constructor(
    private readonly file: string,
    initial: LoadedConfig,
  ) {
    this.runtime = runtimeOf(initial)
  }

  static async open(file: string): Promise<Result<ConfigStore, string[]>> {
    const loaded = await loadConfig(file)
    if (!loaded.ok) return err(loaded.error.map(formatProblem))
    return ok(new ConfigStore(file, loaded.value))
  }

  current(): Runtime {
    return this.runtime
  }

  onReload(listener: (r: Runtime) => void): void {
    this.listeners.push(listener)
  }

  /** Loads the file again; on failure the running configuration stays and the problems are returned. */
  async reload(): Promise<Result<Runtime, string[]>> {
    const loaded = await loadConfig(this.file)
    if (!loaded.ok) return err(loaded.error.map(formatProblem))
    this.runtime = runtimeOf(loaded.value)
    for (const l of this.listeners) l(this.runtime)
    return ok(this.runtime)
  }
}
