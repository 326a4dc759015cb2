/**
 * Status events across a daemon SIGKILL mid-call (issue 29, "Done when"): a call_user with a
 * status_callback_url is answered and bridged; the daemon is killed while the two parties talk;
 * the next daemon takes the request up from the journal (callbacks/status-events.ts `resume`) and
 * tells the rest of the call. Every event of every leg arrives once (a repeat only with the same
 * X-Delivery-Id), numbered 1..n without a gap, in order, and the legs' completed carry the figures
 * of the hangup the second daemon saw.
 */
import t from 'tap'
import { faultStack, sleep, waitFor } from '../faults/harness/stack.js'
import { faultyReceiver } from '../faults/harness/receiver.js'

t.setTimeout(120_000)

type Doc = Record<string, unknown>

interface StatusEvent {
  readonly event: string
  readonly uuid: string
  readonly leg: string
  readonly sequence: number
  readonly hangup_cause?: string
  readonly hangup_by?: string
  readonly billsec?: number
}

t.test('SIGKILL while the parties talk: the rest of the call\'s status events come, once each, numbered on', async (t) => {
  const status = await faultyReceiver(t)
  const stack = await faultStack(t, {
    domainEdit: (doc: Doc) => {
      // The agent answers after 0.4 s and stays; the customer answers after 0.2 s and hangs up 20 s
      // later (delays x0.1): the kill and the restart fall in their talk.
      ;(doc['users'] as Doc[]).push(
        { id: '31', name: 'agent', extension: '1031', password: 'agent-sip-secret', sim: { terminals: [{ answer_after: 4 }] } },
        { id: '32', name: 'customer', extension: '1032', password: 'customer-sip-secret', sim: { terminals: [{ answer_after: 2, hangup_after: 200 }] } },
      )
    },
    callbacks: { backoff_initial_ms: 50, backoff_max_ms: 200 },
  })
  await stack.startSim()
  const first = await stack.startDaemon()
  const r = await stack.call('call_user', { user_name: 'agent', destination: 'customer', status_callback_url: status.url })
  t.equal(r.status, 200, JSON.stringify(r.json))
  const delivered = (): StatusEvent[] => {
    const ok = status.received.filter((x) => x.status === 204)
    return ok.filter((x, i) => ok.findIndex((y) => y.deliveryId === x.deliveryId) === i).map((x) => JSON.parse(x.body) as StatusEvent)
  }
  await waitFor('bridged delivered', () => delivered().some((e) => e.event === 'bridged'), 10_000)
  const beforeKill = delivered().length
  first.signal('SIGKILL')
  await first.exited

  await stack.startDaemon()
  await waitFor('both legs completed', () => delivered().filter((e) => e.event === 'completed').length >= 2, 40_000)
  await sleep(1000)
  const events = delivered()
  t.ok(events.length > beforeKill, `${events.length - beforeKill} events told by the second daemon`)
  t.same(events.map((e) => e.sequence), events.map((_, i) => i + 1), 'numbered 1..n without a gap or a repeat, delivered in order, across the kill')
  const agent = r.json?.uuids?.[0] ?? ''
  const of = (uuid: string) => events.filter((e) => e.uuid === uuid).map((e) => e.event)
  t.same(of(agent), ['initiated', 'ringing', 'answered', 'bridged', 'completed'], "the agent's leg: each event once")
  const customer = events.find((e) => e.leg === 'destination')?.uuid ?? ''
  t.same(of(customer), ['initiated', 'ringing', 'answered', 'completed'], "the customer's leg: each event once")
  const ends = events.filter((x) => x.event === 'completed')
  t.same(ends.map((e) => [e.leg, e.hangup_cause, e.hangup_by]), [
    ['destination', 'NORMAL_CLEARING', 'destination'],
    ['origin', 'NORMAL_CLEARING', 'destination'],
  ], 'the customer hung up, as the second daemon saw it')
  for (const e of ends) t.ok((e.billsec ?? -1) >= 7, `${e.leg}: billsec ${e.billsec}, counted from the answer the first daemon saw`)
})
