/**
 * The FreeSWITCH simulator as a process of its own (`node dist/sim/main.js --config daemon.yaml`),
 * so that a daemon in `freeswitch` mode runs against it unchanged, and so that fault tests can
 * freeze it (SIGSTOP) or kill it like a real switch (test/faults/). It reads the daemon's own
 * configuration: the Event Socket address and password (`freeswitch.*`), the domains with their
 * `sim` behaviours, and where the daemon serves mod_xml_curl, which it fetches like FreeSWITCH.
 *
 * runSimulator(argv) is the whole program (main.ts only hands it process.argv); a `cod simulator`
 * command can call it the same way. startStandaloneSimulator() is the part without arguments and
 * signals, for callers that already hold the options.
 */
import { parseArgs } from 'node:util'
import { formatProblem, loadConfig, type LoadedConfig } from '../config/load.js'
import { xmlCurlUrlOf as xmlCurlUrlFormula } from '../config/endpoints.js'
import { createLogger, type Logger } from '../util/logger.js'
import { err, ok, type Result } from '../util/result.js'
import { Simulator } from './simulator.js'

export const SIMULATOR_USAGE = `usage: node dist/sim/main.js [--config conf/daemon.yaml] [--xml-curl-url URL] [--time-scale N] [--port N]

  --config, -c     the daemon's configuration file: freeswitch.host/port/password, the domains'
                   sim settings, and the daemon's xml_curl endpoint (default conf/daemon.yaml)
  --xml-curl-url   where to fetch directory and dialplan documents (default: derived from the
                   file: xml_curl.base_url or http://<xml_curl.host>:<xml_curl.port>, then
                   xml_curl.path/xml_curl; required when xml_curl.port is 0)
  --time-scale     multiplies every simulated delay (0.05: answer_after 1 = 50 ms; default 1)
  --port           listen on this port instead of freeswitch.port (0: any free port)

Logs are JSON lines on stdout. SIGTERM/SIGINT (or fsctl shutdown over ESL) stop it; SIGHUP
re-reads the domains.
`

export interface SimulatorArgs {
  readonly configFile: string
  readonly xmlCurlUrl?: string
  readonly timeScale: number
  readonly port?: number
}

/** Parses the command line; a wrong one is an error text (with the usage), never a throw. */
export function parseSimulatorArgs(argv: readonly string[]): Result<SimulatorArgs | 'help', string> {
  let values: { config?: string; 'xml-curl-url'?: string; 'time-scale'?: string; port?: string; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string', short: 'c' },
        'xml-curl-url': { type: 'string' },
        'time-scale': { type: 'string' },
        port: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (e) {
    return err((e as Error).message)
  }
  if (values.help === true) return ok('help')
  const timeScale = values['time-scale'] === undefined ? 1 : Number(values['time-scale'])
  if (!Number.isFinite(timeScale) || timeScale <= 0 || timeScale > 1000) return err('--time-scale must be a number above 0 (at most 1000)')
  let port: number | undefined
  if (values.port !== undefined) {
    port = Number(values.port)
    if (!/^\d{1,5}$/.test(values.port) || port > 65535) return err('--port must be 0-65535')
  }
  const url = values['xml-curl-url']
  if (url !== undefined && !isHttpUrl(url)) return err('--xml-curl-url must be an http(s) URL')
  return ok({
    configFile: values.config ?? 'conf/daemon.yaml',
    timeScale,
    ...(url !== undefined ? { xmlCurlUrl: url } : {}),
    ...(port !== undefined ? { port } : {}),
  })
}

const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return u.protocol === 'http:' || u.protocol === 'https:'
  } catch {
    return false
  }
}

/**
 * Where FreeSWITCH would fetch the daemon's documents: `xml_curl.base_url` when the operator
 * wrote it, else the daemon's xml_curl listener (a wildcard listen address reached on loopback);
 * the formula is config/endpoints.ts'. Undefined when that listener's port is 0 (any free port:
 * only the daemon knows it, so --xml-curl-url must say it).
 * @internal Exported for tests: test/faults and test/xmlcurl point the simulator at a daemon.
 */
export function xmlCurlUrlOf(config: LoadedConfig): string | undefined {
  const d = config.daemon
  if (d.xml_curl.base_url === undefined && d.xml_curl.port === 0) return undefined
  return xmlCurlUrlFormula(d)
}

export interface StandaloneSimulator {
  readonly simulator: Simulator
  readonly port: number
  readonly xmlCurlUrl: string
  /** Re-reads the configuration file; the domains follow, a bad file keeps the running ones. */
  reload(): Promise<Result<void, string[]>>
  stop(): Promise<void>
}

/**
 * Loads the daemon's file and starts the simulator on its Event Socket address.
 * @internal Exported for tests: test/xmlcurl starts the simulator in-process.
 */
export async function startStandaloneSimulator(args: SimulatorArgs, logger?: Logger): Promise<Result<StandaloneSimulator, string[]>> {
  const loaded = await loadConfig(args.configFile)
  if (!loaded.ok) return err(loaded.error.map(formatProblem))
  const config = loaded.value
  const fs = config.daemon.freeswitch
  const log = logger ?? createLogger(config.daemon.log.level).child({ part: 'sim' })
  const xmlCurlUrl = args.xmlCurlUrl ?? xmlCurlUrlOf(config)
  if (xmlCurlUrl === undefined) return err([`${args.configFile}: xml_curl.port is 0 (any free port): give the daemon's xml_curl URL with --xml-curl-url`])
  if (fs.mode === 'simulator') {
    // Not refused: the file may only be borrowed for its domains. But a daemon started on it
    // would run its own simulator on this port.
    log.warn({ file: args.configFile }, 'freeswitch.mode is "simulator": a daemon on this file starts its own simulator; use "freeswitch" to run it against this one')
  }
  const simulator = new Simulator({
    domains: config.domains,
    password: fs.password,
    sipProfile: fs.sip_profile,
    xmlCurl: { url: xmlCurlUrl, username: config.daemon.xml_curl.username, password: config.daemon.xml_curl.password },
    logger: log,
    timeScale: args.timeScale,
  })
  let port: number
  try {
    port = await simulator.listen(args.port ?? fs.port, fs.host)
  } catch (e) {
    await simulator.close()
    return err([`cannot listen on ${fs.host}:${args.port ?? fs.port}: ${(e as Error).message}`])
  }
  log.info({ host: fs.host, port, xml_curl: xmlCurlUrl, time_scale: args.timeScale, pid: process.pid }, 'simulator listening')
  let stopping: Promise<void> | undefined
  return ok({
    simulator,
    port,
    xmlCurlUrl,
    async reload() {
      const again = await loadConfig(args.configFile)
      if (!again.ok) {
        const problems = again.error.map(formatProblem)
        log.error({ problems }, 'configuration reload refused; the running domains stay')
        return err(problems)
      }
      simulator.setDomains(again.value.domains)
      log.info({ domains: again.value.domains.map((d) => d.name) }, 'configuration reloaded')
      return ok(undefined)
    },
    stop() {
      stopping ??= simulator.close().then(() => log.info('simulator stopped'))
      return stopping
    },
  })
}

export interface ProcessLike {
  readonly stdout: { write(s: string): unknown }
  readonly stderr: { write(s: string): unknown }
  once(signal: NodeJS.Signals, listener: () => void): unknown
  on(signal: NodeJS.Signals, listener: () => void): unknown
}

/**
 * The program: parses argv, starts, runs until SIGTERM, SIGINT or `fsctl shutdown`, stops. Resolves the exit
 * code: 0 after a stop, 2 for a bad command line or configuration (said on stderr).
 */
export async function runSimulator(argv: readonly string[], proc: ProcessLike = process): Promise<number> {
  const parsed = parseSimulatorArgs(argv)
  if (!parsed.ok) {
    proc.stderr.write(`${parsed.error}\n${SIMULATOR_USAGE}`)
    return 2
  }
  if (parsed.value === 'help') {
    proc.stdout.write(SIMULATOR_USAGE)
    return 0
  }
  const started = await startStandaloneSimulator(parsed.value)
  if (!started.ok) {
    proc.stderr.write(`simulator not started:\n${started.error.map((p) => `  ${p}`).join('\n')}\n`)
    return 2
  }
  const sim = started.value
  proc.on('SIGHUP', () => void sim.reload())
  // Like FreeSWITCH, the process ends when the switch shuts down, asked by a signal or by
  // `fsctl shutdown` on the event socket.
  await Promise.race([
    new Promise<void>((resolve) => {
      proc.once('SIGTERM', resolve)
      proc.once('SIGINT', resolve)
    }),
    sim.simulator.shutDown,
  ])
  await sim.stop()
  return 0
}
