/**
 * Issue 31 item 1 on the real switch: the lane's ring-all group `ringers` (world.ts laneDomain:
 * dave, not registered; alice, two terminals, the first answering after 1 s; frank, two terminals
 * that never answer) called with call_group.
 *
 * - Under the lane's channel_limit of 4 it is refused `channel_limit_reached` with nothing created:
 *   its four legs and bob's one are reserved together before anything rings.
 * - With room (the domain file given a limit of 6 and the daemon reloaded, as SIGHUP does), the
 *   four registered terminals ring at once (all four created before any answers, one originate),
 *   the first to answer is bridged to bob, the other three end LOSE_RACE, the callback names the
 *   winner, and CTI shows every leg with the group.
 * - The same group with `"strategy": "hunt"` rings as call_group did before: dave skipped,
 *   alice's terminals in her turn, frank's never.
 *
 * lane.realfs.ts calls ringAll with its real world (the limit is put back at the end); the
 * simulator's side is test/e2e/ring-all.test.ts.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import type { Test } from 'tap'
import type { RecordedEvent } from './esl-tap.js'
import { DOMAIN, waitUntil, type RealWorld } from './world.js'

interface CtiChannel {
  readonly uuid: string
  readonly group_id: string | null
  readonly user_id: string | null
}

const GROUP_ID = '12'

/** Rewrites the lane's domain file with this channel_limit and reloads the real daemon. */
async function setChannelLimit(t: Test, real: RealWorld, limit: number): Promise<void> {
  const { file, daemon } = real.daemon.store.current().config
  const domainFile = join(resolve(dirname(file), daemon.directory), `${DOMAIN}.yaml`)
  const text = await readFile(domainFile, 'utf8')
  await writeFile(domainFile, text.replace(/^channel_limit: \d+$/m, `channel_limit: ${limit}`))
  const reloaded = await real.daemon.reload()
  t.ok(reloaded.ok, `channel_limit ${limit} loaded${reloaded.ok ? '' : `: ${reloaded.error.join('; ')}`}`)
}

const of = (events: readonly RecordedEvent[], name: string, uuid: string) => events.find((e) => e.name === name && e.headers['Unique-ID'] === uuid)

export async function ringAll(t: Test, real: RealWorld): Promise<void> {
  const since = (from: number) => real.tap.events.slice(from)

  // The lane's limit of 4 cannot hold four legs and bob's: refused before anything rings.
  let from = real.tap.events.length
  const refused = await real.post('call_group', { group_name: 'ringers', destination: 'bob' })
  t.equal(refused.status, 429, `refused under the lane's limit of 4: ${JSON.stringify(refused.body)}`)
  t.match(refused.body, { error: { id: 'channel_limit_reached' } })
  await new Promise((r) => setTimeout(r, 300))
  t.same(since(from).filter((e) => e.name === 'CHANNEL_CREATE'), [], 'no channel was created')

  await setChannelLimit(t, real, 6)
  try {
    const cti = await real.cti('app_name=lane-ring-all&full_events=true')
    try {
      from = real.tap.events.length
      const fromCallbacks = real.callbacks.length
      const reply = await real.post('call_group', { group_name: 'ringers', destination: 'bob', callback_url: real.callbackUrl })
      t.equal(reply.status, 200, JSON.stringify(reply.body))
      const uuids = (reply.body['uuids'] as string[] | undefined) ?? []
      t.equal(uuids.length, 4, 'one UUID per registered terminal: alice 2, frank 2, dave none')
      const bridge = await waitUntil('the bridge', () => since(from).find((e) => e.name === 'CHANNEL_BRIDGE' && uuids.includes(e.headers['Unique-ID'] ?? '')), 20_000)
      const winner = bridge.headers['Unique-ID'] ?? ''
      const events = since(from)
      const created = uuids.map((u) => of(events, 'CHANNEL_CREATE', u))
      t.ok(created.every((e) => e !== undefined), 'all four legs were created')
      const firstAnswer = events.findIndex((e) => e.name === 'CHANNEL_ANSWER' && uuids.includes(e.headers['Unique-ID'] ?? ''))
      t.ok(created.every((e) => e !== undefined && events.indexOf(e) < firstAnswer), 'all four rang before any answered: at once')
      t.equal(new Set(created.map((e) => e?.headers['variable_cod_request_id'])).size, 1, 'one request')
      t.equal(of(events, 'CHANNEL_CREATE', winner)?.headers['variable_cod_user_id'], '1', "the winner is alice's terminal that answers")
      t.same(
        created.map((e) => e?.headers['variable_cod_user_id']).sort(),
        ['1', '1', '6', '6'],
        "two legs of alice's, two of frank's",
      )
      const cb = await waitUntil('the callback', () => real.callbacks.slice(fromCallbacks).find((c) => (c.body as { result_code?: number }).result_code !== undefined), 10_000)
      t.same(cb.body, { result_code: 0, uuid: winner }, 'the callback names the winner')
      const losers = uuids.filter((u) => u !== winner)
      const hangups = await waitUntil(
        'the three losers hung up',
        () => {
          const h = losers.map((u) => of(since(from), 'CHANNEL_HANGUP', u))
          return h.every((e) => e !== undefined) ? h : undefined
        },
        10_000,
      )
      t.same(
        hangups.map((e) => e?.headers['Hangup-Cause']),
        ['LOSE_RACE', 'LOSE_RACE', 'LOSE_RACE'],
        'the other three ended LOSE_RACE',
      )
      const seen = cti.messages.map((m) => (m as { channel?: CtiChannel }).channel).filter((c): c is CtiChannel => c !== undefined && uuids.includes(c.uuid))
      for (const u of uuids) {
        const mine = seen.filter((c) => c.uuid === u)
        t.ok(mine.length > 0 && mine.every((c) => c.group_id === GROUP_ID), `CTI showed leg ${u.slice(0, 8)} (user ${mine[0]?.user_id}) with the group`)
      }
      await real.remoteHangup(winner)
      await real.idle()
    } finally {
      cti.close()
    }

    // The same group hunted: as call_group always did.
    from = real.tap.events.length
    const fromCallbacks = real.callbacks.length
    const hunted = await real.post('call_group', { group_name: 'ringers', destination: 'bob', strategy: 'hunt', callback_url: real.callbackUrl })
    t.equal(hunted.status, 200, JSON.stringify(hunted.body))
    const uuids = (hunted.body['uuids'] as string[] | undefined) ?? []
    t.equal(uuids.length, 4, 'the reply lists every leg the hunt may create')
    const bridge = await waitUntil('the hunt\'s bridge', () => since(from).find((e) => e.name === 'CHANNEL_BRIDGE' && uuids.includes(e.headers['Unique-ID'] ?? '')), 20_000)
    const winner = bridge.headers['Unique-ID'] ?? ''
    const cb = await waitUntil('the hunt\'s callback', () => real.callbacks.slice(fromCallbacks).find((c) => (c.body as { result_code?: number }).result_code !== undefined), 10_000)
    t.same(cb.body, { result_code: 0, uuid: winner }, 'the callback names the winner')
    const userIds = since(from)
      .filter((e) => e.name === 'CHANNEL_CREATE' && uuids.includes(e.headers['Unique-ID'] ?? ''))
      .map((e) => e.headers['variable_cod_user_id'])
    t.same(userIds, ['1', '1'], "alice's two terminals rang in her turn; frank's never")
    await real.remoteHangup(winner)
    await real.idle()
  } finally {
    await setChannelLimit(t, real, 4)
  }
}
