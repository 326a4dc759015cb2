/** Shared setup of the IVR runner tests: a directory, parked channels, a runner over the fakes. */
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { daemonSchema, domainSchema } from '../../../src/config/schema.js'
import { runtimeOf, type Runtime } from '../../../src/runtime/store.js'
import { createIvrRunner, type IvrRunner, type IvrRunnerDeps } from '../../../src/ivr/runner/index.js'
import { silentLogger } from '../../../src/util/logger.js'
import { FakePbx, type Script } from '../../support/fake-pbx.js'
import { FakeFetcher } from './fakes.js'

export const DOMAIN = 'example.test'
export const MENU_URL = 'https://ivr.example.test/menu?a=1'

const domain = {
  name: DOMAIN,
  api_tokens: ['plain-token-for-tests'],
  privileges: ['ON_THE_FLY_IVR_ALLOWED'],
  channel_limit: 20,
  gateway: 'pstn',
  calling_numbers: ['0501230000', '0501230001'],
  time_zone: 'Asia/Tokyo',
  users: [
    { id: '1', name: 'alice', label: 'Alice', extension: '1001', did: '0501230001', password: 'alice-sip-secret' },
    { id: '2', name: 'bob', label: 'Bob', extension: '1002', password: 'bob-sip-secret' },
    { id: '3', name: 'carol', extension: '1003', password: 'carol-sip-secret' },
  ],
  groups: [
    { id: '10', name: 'sales', extension: '2001', members: ['carol', 'alice', 'bob'], answer_timeout: 40, member_answer_timeout: 15 },
    { id: '11', name: 'empty', extension: '2002', members: [] },
  ],
  extensions: [
    { number: '3001', xml_url: MENU_URL },
    { number: '3002', xml_url: 'https://ivr.example.test/other' },
  ],
}

function makeRuntime(): Runtime {
  const daemon = daemonSchema.parse({
    freeswitch: { mode: 'simulator' },
    xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' },
    ivr: { media_dir: MEDIA_DIR },
  })
  return runtimeOf({ file: '/test/daemon.yaml', daemon, domains: [domainSchema.parse(domain)] })
}

/** The prompt folder of these tests (ivr.media_dir): Play's file names are played from it. */
export const MEDIA_DIR = '/prompts'

export const wrap = (inner: string): string => `<IVR>${inner}</IVR>`

/** Headers of a phone call (alice dialled 3001) as CHANNEL_PARK shows them. */
export const phoneHeaders = (uuid: string): Record<string, string> => ({
  'Unique-ID': uuid,
  'Call-Direction': 'inbound',
  'Caller-Destination-Number': '3001',
  'Caller-Caller-ID-Number': '1001',
  'Caller-Caller-ID-Name': 'Alice',
  'Caller-Channel-Created-Time': '1795327686281943',
  'Caller-Channel-Answered-Time': '1795327686302035',
})

export const phoneVars = (): Record<string, string> => ({
  sip_authorized: 'true',
  user_name: 'alice',
  domain_name: DOMAIN,
  cod_domain: DOMAIN,
})

export interface Rig {
  readonly pbx: FakePbx
  readonly fetcher: FakeFetcher
  readonly runner: IvrRunner
  readonly uuid: string
  /** Parks the channel for the IVR with a registered inline document. */
  parkInline(xml: string, opts?: { answered?: boolean; uuid?: string }): string
  /** Parks the channel as the dialplan does for extension 3001 (its URL). */
  parkExtension(opts?: { answered?: boolean; uuid?: string; url?: string; extension?: string }): string
  /** Waits until no session runs. */
  settle(): Promise<void>
}

export function rig(t: Test, opts: { script?: Script; now?: () => Date; deps?: Partial<IvrRunnerDeps> } = {}): Rig {
  const pbx = new FakePbx()
  if (opts.script !== undefined) pbx.script = opts.script
  const fetcher = new FakeFetcher()
  const rt = makeRuntime()
  const runner = createIvrRunner({
    pbx,
    runtime: () => rt,
    fetcher,
    logger: silentLogger(),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    ...opts.deps,
  })
  t.teardown(() => runner.close())
  const uuid = randomUUID()
  const settle = async (): Promise<void> => {
    // Most sessions end within a few turns of the event loop; Park tests wait for a real timer.
    const deadline = Date.now() + 5000
    for (let i = 0; Date.now() < deadline; i++) {
      await new Promise<void>((r) => (i < 200 ? setImmediate(r) : setTimeout(r, 10)))
      if (runner.activeSessions() === 0) return
    }
    throw new Error('sessions did not end')
  }
  return {
    pbx,
    fetcher,
    runner,
    uuid,
    settle,
    parkInline(xml, o = {}) {
      const id = o.uuid ?? uuid
      const key = randomUUID()
      runner.register(DOMAIN, key, { kind: 'inline', xml })
      pbx.park(id, phoneHeaders(id), { ...phoneVars(), cod_ivr_request: key }, o.answered ?? true)
      return id
    },
    parkExtension(o = {}) {
      const id = o.uuid ?? uuid
      pbx.park(
        id,
        phoneHeaders(id),
        { ...phoneVars(), cod_ivr_url: encodeURIComponent(o.url ?? MENU_URL), cod_ivr_extension: o.extension ?? '3001' },
        o.answered ?? true,
      )
      return id
    },
  }
}

/** Runs an inline document on an answered phone call to its end; returns the rig. */
export async function runInline(
  t: Test,
  xml: string,
  opts: Parameters<typeof rig>[1] & { answered?: boolean; docs?: Record<string, string>; json?: Record<string, unknown>; blockedHosts?: string[] } = {},
): Promise<Rig> {
  const r = rig(t, opts)
  for (const host of opts.blockedHosts ?? []) r.fetcher.blockedHosts.add(host)
  for (const [url, body] of Object.entries(opts.docs ?? {})) r.fetcher.docs.set(url, body)
  for (const [url, body] of Object.entries(opts.json ?? {})) r.fetcher.json.set(url, body)
  r.parkInline(xml, { answered: opts.answered ?? true })
  await r.settle()
  return r
}

/** The uuid_kill commands sent, as `cause` words. */
export const kills = (r: Rig): string[] =>
  r.pbx.commands.filter((c) => c.startsWith(`uuid_kill ${r.uuid}`)).map((c) => c.split(' ')[2] ?? '')
