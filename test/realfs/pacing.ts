/**
 * Issue 31 item 3 on the real switch: a burst of originates above FreeSWITCH's
 * sessions-per-second, with and without the daemon's pace (docs/engine.md "Pacing").
 *
 * - The switch's rate is lowered to 10 with `fsctl sps 10` (it then admits 9 sessions a second)
 *   through the lane's own ESL connection, and put back to 30 at the end.
 * - Each burst is placed by a daemon of its own, started for it on the lane's switch (the lane's
 *   daemon read the rate when it connected, before the change; a daemon reads it at each
 *   connection), with a copy of the lane's domain whose channel_limit fits the burst. Each
 *   request is a call_external to the carrier's busy number (486 at once, no dialplan, no
 *   destination leg): one session per request, over in a moment.
 * - Without pacing (`max_originates_per_second: 1000`): FreeSWITCH refuses some originates for
 *   its rate (`Throttle Error!` in its log, no CHANNEL_CREATE for their legs) after the API said
 *   200: today's behaviour, measured.
 * - With the default (no key: 80 % of the sps read at connection, 8 a second), the same burst
 *   (each request with wait_ms 10000, so that its turn may take seconds): every originate gets its
 *   channel, and no `Throttle Error!` is logged.
 *
 * lane.realfs.ts calls pacing() with its real world; the simulator's side is
 * test/sim/session-rate.test.ts and test/origination/pace.test.ts.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import type { Test } from 'tap'
import { startDaemon, type Daemon } from '../../src/daemon.js'
import { silentLogger } from '../../src/util/logger.js'
import { AUTH, DOMAIN, waitUntil, type RealWorld } from './world.js'

const SPS = 10
const BURST = 30
const BUSY = '0311112222'

interface BurstResult {
  readonly statuses: number[]
  /** Legs the API replied with. */
  readonly legs: string[]
  /** Of those, legs FreeSWITCH created (a CHANNEL_CREATE on the lane's tap). */
  readonly created: string[]
  /** `Throttle Error!` lines FreeSWITCH logged during the burst. */
  readonly throttled: number
  /** Most legs created within any one second. */
  readonly busiestSecond: number
}

/** A daemon of this test's own on the lane's switch, `freeswitchExtra` added to its freeswitch section. */
async function startBurstDaemon(real: RealWorld, dir: string, freeswitchExtra: string): Promise<Daemon> {
  const { file, daemon } = real.daemon.store.current().config
  const laneDomains = resolve(dirname(file), daemon.directory)
  const domains = join(dir, 'domains')
  await mkdir(domains, { recursive: true })
  for (const f of await readdir(laneDomains)) {
    if (!f.endsWith('.yaml')) continue
    const text = await readFile(join(laneDomains, f), 'utf8')
    await writeFile(join(domains, f), f === `${DOMAIN}.yaml` ? text.replace(/^channel_limit: \d+$/m, `channel_limit: ${BURST * 2 + 10}`) : text)
  }
  const yaml = (await readFile(file, 'utf8')).replace(/^directory: .*$/m, `directory: ${domains}`).replace(/^freeswitch:\n/m, `freeswitch:\n${freeswitchExtra}`)
  const configFile = join(dir, 'daemon.yaml')
  await writeFile(configFile, yaml)
  const s = await startDaemon({ configFile, logger: silentLogger(), httpPort: 0, xmlCurlPort: 0, journalDir: join(dir, 'journal') })
  if (!s.ok) throw new Error(s.error.join('\n'))
  const d = s.value
  await waitUntil('the burst daemon ESL link', () => d.pbx.isConnected(), 10_000)
  // It reads sessions-per-second right after connecting (src/pbx/session-rate.ts): give the read its round trip.
  await new Promise((r) => setTimeout(r, 300))
  return d
}

async function burst(real: RealWorld, d: Daemon, body: Record<string, unknown>): Promise<BurstResult> {
  const logBefore = (await readFile(real.log, 'utf8')).length
  const eventsBefore = real.tap.events.length
  const replies = await Promise.all(
    Array.from({ length: BURST }, async () => {
      const res = await fetch(`${d.baseUrl}/api/call_external`, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'application/json' },
        body: JSON.stringify({ target: BUSY, destination: 'bob', ...body }),
      })
      return { status: res.status, body: (await res.json()) as { uuids?: string[] } }
    }),
  )
  const legs = replies.flatMap((r) => r.body.uuids ?? [])
  const createsOf = () => real.tap.events.slice(eventsBefore).filter((e) => e.name === 'CHANNEL_CREATE' && legs.includes(e.headers['Unique-ID'] ?? ''))
  // A 200 comes when FreeSWITCH accepted the originate's bgapi, before it creates the leg, and a
  // busy call is over in a moment: after the last replies of a paced burst the switch can be idle
  // for an instant before their legs exist (two legs were missed so, once). So: every announced
  // leg created, or no new one for 2 s (a refused originate never creates its leg), then idle.
  let seen = -1
  let stableSince = Date.now()
  await waitUntil(
    'the burst\'s legs created',
    () => {
      const n = createsOf().length
      if (n !== seen) {
        seen = n
        stableSince = Date.now()
      }
      return n === legs.length || Date.now() - stableSince > 2000 || undefined
    },
    30_000,
  )
  await real.idle(30_000)
  const creates = createsOf()
  const times = creates.map((e) => e.at).sort((a, b) => a - b)
  const busiestSecond = Math.max(0, ...times.map((at) => times.filter((x) => x >= at && x < at + 1000).length))
  const log = (await readFile(real.log, 'utf8')).slice(logBefore)
  return {
    statuses: replies.map((r) => r.status),
    legs,
    created: creates.map((e) => e.headers['Unique-ID'] ?? ''),
    throttled: (log.match(/Throttle Error!/g) ?? []).length,
    busiestSecond,
  }
}

export async function pacing(t: Test, real: RealWorld): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'cod-pacing-'))
  t.equal(await real.tap.api(`fsctl sps ${SPS}`), `+OK sessions per second: ${SPS}\n`, `FreeSWITCH sessions-per-second lowered to ${SPS}`)
  t.teardown(async () => {
    await real.tap.api('fsctl sps 30')
    await rm(dir, { recursive: true, force: true })
  })
  // FreeSWITCH's next second brings the new budget.
  await new Promise((r) => setTimeout(r, 1100))

  // Before: no pacing to speak of.
  const unpaced = await startBurstDaemon(real, join(dir, 'unpaced'), '  max_originates_per_second: 1000\n')
  let before: BurstResult
  try {
    before = await burst(real, unpaced, {})
  } finally {
    await unpaced.stop()
  }
  t.comment(`without pacing: ${before.statuses.filter((s) => s === 200).length}/${BURST} answered 200, ${before.created.length} legs created, ${before.throttled} "Throttle Error!", busiest second ${before.busiestSecond} creates`)
  t.ok(before.statuses.every((s) => s === 200), 'without pacing every request is answered 200 (FreeSWITCH accepted each bgapi)')
  t.ok(before.throttled > 0, 'and FreeSWITCH refused some originates for its rate (today\'s behaviour)')
  t.ok(before.created.length < before.legs.length, 'those legs were never created')

  await new Promise((r) => setTimeout(r, 1100))
  // After: the default pace, from the rate the daemon reads when it connects.
  const paced = await startBurstDaemon(real, join(dir, 'paced'), '')
  let after: BurstResult
  try {
    after = await burst(real, paced, { wait_ms: 10_000 })
  } finally {
    await paced.stop()
  }
  t.comment(`with pacing: ${after.statuses.filter((s) => s === 200).length}/${BURST} answered 200, ${after.created.length} legs created, ${after.throttled} "Throttle Error!", busiest second ${after.busiestSecond} creates`)
  t.same(after.statuses, Array(BURST).fill(200), 'with pacing every request is placed')
  t.equal(after.throttled, 0, 'no originate refused by FreeSWITCH for its rate')
  t.same([...after.created].sort(), [...after.legs].sort(), 'every leg the API announced was created')
  t.ok(after.busiestSecond <= SPS - 1, `at most ${SPS - 1} creates in any second (${after.busiestSecond})`)
}
