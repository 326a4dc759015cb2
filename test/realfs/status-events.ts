/**
 * Issue 29 item 1 on the real switch: the status events of a call_user answered on one of alice's
 * two terminals and bridged to bob, each leg's events in a call's order, numbered without gaps,
 * and every `completed`'s billsec and duration_s equal to FreeSWITCH's own `variable_billsec` and
 * `variable_duration` of that leg's CHANNEL_HANGUP_COMPLETE (within 1 s), hangup_by from the
 * switch's sip_hangup_disposition. lane.realfs.ts calls statusEvents with its real world; the
 * simulator's side is test/e2e/status-events.test.ts.
 */
import type { Test } from 'tap'
import { waitUntil, type RealWorld } from './world.js'

interface StatusEvent {
  readonly event: string
  readonly request_id: string
  readonly uuid: string
  readonly leg: string
  readonly sequence: number
  readonly billsec?: number
  readonly duration_s?: number
  readonly hangup_cause?: string
  readonly hangup_by?: string
  readonly answered_uuid?: string | null
}

const STATUS = new Set(['initiated', 'ringing', 'answered', 'bridged', 'completed'])
const statusOf = (body: unknown): StatusEvent | undefined => {
  const e = body as Partial<StatusEvent> | null
  return typeof e?.event === 'string' && STATUS.has(e.event) && typeof e.sequence === 'number' ? (e as StatusEvent) : undefined
}

export async function statusEvents(t: Test, real: RealWorld): Promise<void> {
  const from = real.tap.events.length
  const fromCallbacks = real.callbacks.length
  const reply = await real.post('call_user', { user_name: 'alice', destination: 'bob', status_callback_url: real.callbackUrl })
  t.equal(reply.status, 200)
  const requestUuids = (reply.body['uuids'] as string[] | undefined) ?? []
  const bridge = await waitUntil('the bridge', () => real.tap.events.slice(from).find((e) => e.name === 'CHANNEL_BRIDGE' && requestUuids.includes(e.headers['Unique-ID'] ?? '')), 20_000)
  const winner = bridge.headers['Unique-ID'] ?? ''
  await new Promise((r) => setTimeout(r, 2200))
  await real.remoteHangup(winner)
  await real.idle()
  const mine = () => real.callbacks.slice(fromCallbacks).map((c) => statusOf(c.body)).filter((e): e is StatusEvent => e !== undefined)
  await waitUntil('three completed events', () => mine().filter((e) => e.event === 'completed').length >= 3 || undefined, 10_000)
  const events = mine()
  t.same(events.map((e) => e.sequence), events.map((_, i) => i + 1), 'numbered 1..n without gaps, delivered in order')
  const of = (uuid: string) => events.filter((e) => e.uuid === uuid).map((e) => e.event)
  t.same(of(winner), ['initiated', 'ringing', 'answered', 'bridged', 'completed'], 'the terminal that answered')
  const bob = events.find((e) => e.leg === 'destination')?.uuid ?? ''
  t.same(of(bob), ['initiated', 'ringing', 'answered', 'completed'], "bob's leg")
  const loser = requestUuids.find((u) => u !== winner) ?? ''
  t.match(events.find((e) => e.uuid === loser && e.event === 'completed'), { hangup_cause: 'LOSE_RACE', hangup_by: 'system', answered_uuid: winner })
  t.match(events.find((e) => e.uuid === winner && e.event === 'completed'), { hangup_cause: 'NORMAL_CLEARING', hangup_by: 'origin' }, 'alice hung up')
  t.match(events.find((e) => e.uuid === bob && e.event === 'completed'), { hangup_by: 'origin' }, "bob's leg ended because alice did")
  for (const e of events.filter((x) => x.event === 'completed')) {
    const complete = real.tap.events.slice(from).find((x) => x.name === 'CHANNEL_HANGUP_COMPLETE' && x.headers['Unique-ID'] === e.uuid)
    const billsec = Number(complete?.headers['variable_billsec'])
    const duration = Number(complete?.headers['variable_duration'])
    t.ok(Math.abs((e.billsec ?? -9) - billsec) <= 1, `${e.leg} ${e.uuid.slice(0, 8)}: billsec ${e.billsec} against FreeSWITCH's ${billsec}`)
    t.ok(Math.abs((e.duration_s ?? -9) - duration) <= 1, `${e.leg} ${e.uuid.slice(0, 8)}: duration_s ${e.duration_s} against FreeSWITCH's ${duration}`)
  }
}
