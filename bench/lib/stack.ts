/**
 * The system under test: the daemon (worker `daemon`) connected over a real Event Socket to the
 * simulator (worker `sim`), each in its own process, on a generated configuration.
 */
import { writeBenchConfig, freePort, type BenchConfig, type BenchConfigOptions } from './config.js'
import { startWorker, type Worker } from './procs.js'

export interface Stack {
  readonly daemon: Worker
  readonly sim: Worker
  readonly config: BenchConfig
  readonly baseUrl: string
  /** The daemon's xml_curl listener (apart from the API's), where the simulator posts. */
  readonly xmlCurlUrl: string
  readonly eslPort: number
  stop(): Promise<void>
}

export interface StackOptions extends Omit<BenchConfigOptions, 'eslPort'> {
  /** CPU profiles of the daemon and simulator processes: `<name>-daemon`, `<name>-sim`. */
  readonly profile?: { readonly dir: string; readonly name: string }
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const eslPort = await freePort()
  const config = writeBenchConfig({ ...o, eslPort })
  // The daemon first: the simulator needs its URL for mod_xml_curl; esl-lite retries until the simulator listens.
  const daemon = await startWorker('daemon', {
    args: { configFile: config.configFile },
    exposeGc: true,
    ...(o.profile !== undefined ? { profile: { dir: o.profile.dir, name: `${o.profile.name}-daemon` } } : {}),
  })
  const baseUrl = String(daemon.info.baseUrl)
  const xmlCurlUrl = String(daemon.info.xmlCurlUrl)
  const sim = await startWorker('sim', {
    args: { configFile: config.configFile, port: eslPort, xmlCurlUrl },
    ...(o.profile !== undefined ? { profile: { dir: o.profile.dir, name: `${o.profile.name}-sim` } } : {}),
  })
  const deadline = Date.now() + 15_000
  while (!(await daemon.call<boolean>('connected'))) {
    if (Date.now() > deadline) throw new Error('the daemon did not connect to the simulator')
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    daemon,
    sim,
    config,
    baseUrl,
    xmlCurlUrl,
    eslPort,
    async stop() {
      await daemon.stop()
      await sim.stop()
      config.remove()
    },
  }
}
