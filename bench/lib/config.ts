/**
 * The benchmark configuration, written to a temporary folder: one domain `bench.test` with many
 * users (one simulated terminal each) so that concurrent requests never wait on one another,
 * and whatever channel_limit the benchmark needs. The daemon runs in `freeswitch` mode against
 * a simulator in another process (bench/workers/sim.ts), so its memory and CPU are its own.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import YAML from 'yaml'

export const DOMAIN = 'bench.test'
const TOKEN = 'bench-token-0123456789'
export const GATEWAY = 'pstn-bench'
export const XML_CURL = { path: '/freeswitch', username: 'freeswitch', password: 'bench-xml-curl-secret' }
const CALLBACK_SECRET = 'bench-signing-secret-0123'
export const ESL_PASSWORD = 'ClueCon'
export const AUTH = `Basic ${Buffer.from(`${DOMAIN}:${TOKEN}`).toString('base64')}`

export interface BenchConfigOptions {
  readonly users: number
  readonly channelLimit: number
  /** The simulator's Event Socket port (the daemon connects there). */
  readonly eslPort: number
  /** Terminal behaviour of every user... */
  readonly terminal: Record<string, unknown>
  /** ...unless this gives the i-th user's (the soak benchmark's mixed outcomes). */
  readonly terminalOf?: (i: number) => Record<string, unknown>
  /** Behaviour of every PSTN number. */
  readonly pstn: Record<string, unknown>
  readonly logLevel?: string
  /** journal.enabled (default true): false only to measure what the journal costs (bench/journal.ts). */
  readonly journal?: boolean
}

export interface BenchConfig {
  readonly dir: string
  readonly configFile: string
  remove(): void
}

export function writeBenchConfig(o: BenchConfigOptions): BenchConfig {
  const dir = mkdtempSync(join(tmpdir(), 'cod-bench-'))
  mkdirSync(join(dir, 'domains'))
  const daemon = {
    http: { host: '127.0.0.1', port: 0, prefix: '/api' },
    freeswitch: { mode: 'freeswitch', host: '127.0.0.1', port: o.eslPort, password: ESL_PASSWORD, sip_profile: 'internal', command_timeout_ms: 10000 },
    // port 0: the daemon reports the xml_curl listener it got (bench/workers/daemon.ts).
    xml_curl: { ...XML_CURL, host: '127.0.0.1', port: 0 },
    directory: 'domains',
    // The bench's receivers listen on 127.0.0.1, which the outbound address guard refuses unless allowed.
    callbacks: { timeout_ms: 5000, backoff_initial_ms: 100, backoff_max_ms: 1000, concurrency_per_domain: 8, allow: ['127.0.0.1/32'] },
    hunt: { concurrency_per_domain: 1000 },
    // The journal's default folder: beside daemon.yaml, in this temporary folder.
    journal: { enabled: o.journal ?? true },
    log: { level: o.logLevel ?? 'info' },
  }
  const domain = {
    name: DOMAIN,
    api_tokens: [TOKEN],
    privileges: ['ON_THE_FLY_IVR_ALLOWED'],
    channel_limit: o.channelLimit,
    gateway: GATEWAY,
    calling_numbers: ['0501230000'],
    callback_secret: CALLBACK_SECRET,
    users: Array.from({ length: o.users }, (_, i) => ({
      id: String(i + 1),
      name: `u${i}`,
      extension: String(100000 + i),
      password: `sip-secret-${i}`,
      sim: { terminals: [o.terminalOf?.(i) ?? o.terminal] },
    })),
    groups: [],
    sim: { pstn: { default: o.pstn } },
  }
  const configFile = join(dir, 'daemon.yaml')
  writeFileSync(configFile, YAML.stringify(daemon))
  // No anchors/aliases: the terminal object is shared by every user, and the loader caps aliases.
  writeFileSync(join(dir, 'domains', `${DOMAIN}.yaml`), YAML.stringify(domain, { aliasDuplicateObjects: false }))
  return { dir, configFile, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A port nobody listens on right now (the simulator takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      s.close(() => resolve(port))
    })
  })
}
