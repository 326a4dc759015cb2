/**
 * Fault suite from outside (issue 11, the channel_limit row): a burst of two-leg calls (the
 * caller's leg, then the destination leg the dialplan bridges to) at channel_limit 20, seen by
 * an independent ESL observer that counts the domain's live channels at every CHANNEL_CREATE.
 * The promise: live channels ≤ the limit at every instant; the requests beyond it are refused
 * with 429 channel_limit_reached, and a refused request gets no channel.
 */
import t from 'tap'
import { Ledger, describe, errorRepliesRung } from './harness/ledger.js'
import { DOMAIN, faultStack, sleep, waitFor } from './harness/stack.js'

t.setTimeout(120000)

const LIMIT = 20

t.test(`burst of two-leg calls at channel_limit ${LIMIT}: live ≤ limit at every instant`, async (t) => {
  const stack = await faultStack(t, { channelLimit: LIMIT })
  await stack.startSim()
  await stack.startDaemon()
  const ledger = new Ledger()

  // Waves of 30 at once: the first fills the limit; the later ones come while calls still talk
  // (1.5 s) or end, so that admission meets channels being released.
  for (const pause of [700, 1200, 600, 0]) {
    await Promise.all(Array.from({ length: 30 }, () => ledger.post(stack, 'call_user', { user_name: 'caller', destination: 'callee' })))
    await sleep(pause)
  }
  await waitFor('no live channel', () => stack.observer.live.size === 0, 20000).catch(() => undefined)

  const peak = stack.observer.peakByDomain.get(DOMAIN) ?? 0
  const legs = ledger.accepted.map((s) => stack.observer.channelsByRequest.get(s.requestId) ?? 0)
  const twoLeg = legs.filter((n) => n >= 2).length
  t.ok(ledger.accepted.length > 0, `some requests admitted (${ledger.accepted.length})`)
  t.ok(twoLeg > 0, `admitted calls made two legs (${twoLeg} of ${ledger.accepted.length})`)
  t.ok(peak <= LIMIT, `the domain's live channels peaked at ${peak} ≤ ${LIMIT}`)
  t.ok(stack.observer.peakTotal <= LIMIT, `the simulator's live channels peaked at ${stack.observer.peakTotal} ≤ ${LIMIT}`)
  const refused = ledger.errorAnswered
  t.ok(
    refused.every((s) => s.status === 429 && s.json?.error?.id === 'channel_limit_reached'),
    `the others are refused 429 channel_limit_reached (${JSON.stringify(ledger.statusCounts())})`,
  )
  t.same(errorRepliesRung(ledger, stack.observer).map(describe), [], 'no refused request got a channel')
  t.comment(
    `figures: ${JSON.stringify({ requests: ledger.sent.length, replies: ledger.statusCounts(), limit: LIMIT, maxLive: peak, channelsSeen: stack.observer.created, legsPerAdmittedCall: [...new Set(legs)].sort() })}`,
  )
  await stack.daemon?.stop()
  await stack.sim?.stop()
})
