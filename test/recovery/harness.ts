/**
 * In-process setup for recovery tests: the simulator on its own (it outlives the daemons of a
 * test), a TCP relay between the daemon and the simulator's event socket that the test can cut
 * (the ESL link lost for a while, the calls going on), and daemons started on a temporary copy
 * of test/faults/fixtures-in-process in `freeswitch` mode, all on one journal folder. Everything is closed
 * by the test's teardowns.
 */
import net from 'node:net'
import { join } from 'node:path'
import type { Test } from 'tap'
import { ConfigStore } from '../../src/runtime/store.js'
import type { Daemon } from '../../src/daemon.js'
import { Simulator } from '../../src/sim/index.js'
import { createLogger } from '../../src/util/logger.js'
import { editYaml, fixtureCopy, LogCapture } from '../faults/harness/in-process.js'
import { startTestDaemon } from '../support/daemon.js'

/** Simulated delays run 10 times faster (answer_after 8 = 0.8 s). */
const SIM_SCALE = 0.1

type Doc = Record<string, unknown>

/** A TCP relay that can be cut (every connection dropped, new ones refused) and restored. */
export class Relay {
  port = 0
  private cutNow = false
  private readonly sockets = new Set<net.Socket>()
  private readonly server: net.Server

  constructor(private readonly target: number) {
    this.server = net.createServer((client) => {
      if (this.cutNow) return void client.destroy()
      const upstream = net.connect(this.target, '127.0.0.1')
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => undefined)
      }
      client.pipe(upstream).pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()))
    this.port = (this.server.address() as net.AddressInfo).port
    return this.port
  }

  cut(): void {
    this.cutNow = true
    for (const s of this.sockets) s.destroy()
  }

  restore(): void {
    this.cutNow = false
  }

  close(): Promise<void> {
    this.cut()
    return new Promise((r) => this.server.close(() => r()))
  }
}

export interface RecoveryRig {
  readonly sim: Simulator
  readonly relay: Relay
  readonly configFile: string
  readonly journalDir: string
  readonly httpPort: number
  /** The daemon's xml_curl listener, which the simulator posts to (fixed: the simulator outlives each daemon). */
  readonly xmlCurlPort: number
  /** Starts a daemon on the rig's files and journal; waits for its ESL link. */
  daemon(): Promise<{ daemon: Daemon; logs: LogCapture }>
}

async function freePort(): Promise<number> {
  const s = net.createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  const port = (s.address() as net.AddressInfo).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

export async function recoveryRig(t: Test, users: readonly Doc[]): Promise<RecoveryRig> {
  const { configFile, dir } = fixtureCopy(t, {
    domains: { 'fault.test': (doc) => (doc.users as Doc[]).push(...users) },
  })
  const httpPort = await freePort()
  const xmlCurlPort = await freePort()
  const store = await ConfigStore.open(configFile)
  if (!store.ok) throw new Error(store.error.join('; '))
  const cfg = store.value.current().config
  const sim = new Simulator({
    domains: cfg.domains,
    password: 'ClueCon',
    xmlCurl: { url: `http://127.0.0.1:${xmlCurlPort}/freeswitch/xml_curl`, username: 'freeswitch', password: 'fault-xml-curl-secret' },
    timeScale: SIM_SCALE,
  })
  const simPort = await sim.listen(0)
  t.teardown(() => sim.close())
  const relay = new Relay(simPort)
  await relay.listen()
  t.teardown(() => relay.close())
  editYaml(configFile, (doc) => {
    ;(doc.freeswitch as Doc).mode = 'freeswitch'
    ;(doc.freeswitch as Doc).port = relay.port
  })
  const journalDir = join(dir, 'journal')
  return {
    sim,
    relay,
    configFile,
    journalDir,
    httpPort,
    xmlCurlPort,
    async daemon() {
      const logs = new LogCapture()
      const daemon = await startTestDaemon(t, { configFile, logger: createLogger('info', logs.stream), httpPort, xmlCurlPort, journalDir })
      return { daemon, logs }
    },
  }
}
