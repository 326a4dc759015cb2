/**
 * End-to-end harness: the simulator (src/sim) on an ephemeral port, the real ESL connection
 * (pbx/connection.ts over esl-lite) and the engine, with a recording callback sink. Simulated
 * time runs 20x faster; the engine is told so (timeScale) for its hunt budget and watchdogs.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { DomainConfig } from '../../src/config/schema.js'
import { connectPbx, type PbxConnection } from '../../src/pbx/connection.js'
import { createChannelModel, type ChannelModel } from '../../src/channels/index.js'
import { createEngine, type Engine } from '../../src/origination/engine.js'
import { Simulator } from '../../src/sim/index.js'
import { silentLogger } from '../../src/util/logger.js'
import { parseOriginate, type ParsedOriginate } from '../pbx/fs-model.js'
import { waitFor } from '../support/wait.js'
import { RecordingSink, domainConfig, runtimeWith } from './helpers.js'

const TIME_SCALE = 0.05

export interface Harness {
  readonly sim: Simulator
  readonly pbx: PbxConnection
  readonly engine: Engine
  /** The live channels the engine reads. */
  readonly channels: ChannelModel
  readonly sink: RecordingSink
  readonly rt: ReturnType<typeof runtimeWith>
  /** The simulator's ESL port. */
  readonly port: number
  /** The originate commands the simulator received, parsed as FreeSWITCH reads them. */
  originates(): ParsedOriginate[]
}

export { waitFor }

/**
 * A stand-in for the daemon's xml_curl dialplan: every answered leg is parked (so calls stay up
 * until a test hangs them up); everything else is "not found".
 */
async function parkingDialplan(t: Test): Promise<string> {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const form = new URLSearchParams(body)
      const context = form.get('Hunt-Context') ?? form.get('Caller-Context') ?? ''
      res.setHeader('Content-Type', 'text/xml')
      res.end(
        form.get('section') === 'dialplan'
          ? `<document type="freeswitch/xml"><section name="dialplan"><context name="${context}"><extension name="park"><condition field="destination_number" expression="^.*$"><action application="park"/></condition></extension></context></section></document>`
          : '<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>',
      )
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.close(() => r())
        server.closeAllConnections()
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/freeswitch/xml_curl`
}

export async function harness(
  t: Test,
  over: Record<string, unknown> = {},
  opts: { domains?: DomainConfig[]; park?: boolean } = {},
): Promise<Harness> {
  const configs = opts.domains ?? [domainConfig(over)]
  const rt = runtimeWith(configs)
  const xmlCurl = opts.park === true ? { url: await parkingDialplan(t), username: 'freeswitch', password: 'xml-curl-secret' } : undefined
  const sim = new Simulator({ domains: configs, password: 'ClueCon', timeScale: TIME_SCALE, ...(xmlCurl !== undefined ? { xmlCurl } : {}) })
  const port = await sim.listen(0)
  const pbx = connectPbx({
    host: '127.0.0.1',
    port,
    password: 'ClueCon',
    logger: silentLogger(),
    commandTimeoutMs: 2000,
  })
  const sink = new RecordingSink()
  const channels = createChannelModel({ pbx, logger: silentLogger(), directory: () => rt.directory, commandTimeoutMs: 2000 })
  const engine = createEngine({
    pbx,
    channels,
    runtime: () => rt,
    callbacks: sink,
    logger: silentLogger(),
    sipProfile: 'internal',
    huntConcurrency: 8,
    timeScale: TIME_SCALE,
    graceMs: 2000,
  })
  t.teardown(async () => {
    await engine.close()
    channels.close()
    await pbx.close()
    await sim.close()
  })
  await waitFor('ESL link up', () => pbx.isConnected())
  return {
    sim,
    pbx,
    engine,
    channels,
    sink,
    rt,
    port,
    originates: () =>
      sim.commands
        .map((c) => c.text)
        .filter((text) => text.startsWith('bgapi originate '))
        .map((text) => parseOriginate(text.slice('bgapi '.length).split('\n')[0] ?? '')),
  }
}
