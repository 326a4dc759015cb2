/**
 * Ticket events across a daemon SIGKILL (issue 28, "Done when"): a call made for a group with a
 * ticket_webhook; the daemon is killed while the member's phone rings; the next daemon adopts the
 * call (origination/recovery.ts) and takes its ticketing up from the legs' variables: call.started
 * (handed over before the kill), call.answered and call.ended each arrive exactly once, in order.
 */
import t from 'tap'
import { faultStack, sleep, waitFor } from '../faults/harness/stack.js'
import { faultyReceiver } from '../faults/harness/receiver.js'

t.setTimeout(120_000)

type Doc = Record<string, unknown>

t.test('SIGKILL while a group call rings: its ticket events still come, once each, in order', async (t) => {
  const tickets = await faultyReceiver(t)
  const results = await faultyReceiver(t)
  const stack = await faultStack(t, {
    domainEdit: (doc: Doc) => {
      // Answers after 4 s and talks 10 s (delays x0.1): the kill and the restart fall in the ring,
      // and the call is still up when the next daemon hears its answer (the group's timeouts, in
      // FreeSWITCH seconds, are longer than that).
      ;(doc['users'] as Doc[]).push({ id: '31', name: 'agent', extension: '1031', password: 'agent-sip-secret', sim: { terminals: [{ answer_after: 40, hangup_after: 100 }] } })
      doc['groups'] = [{ id: '30', name: 'desk', members: ['agent'], answer_timeout: 600, member_answer_timeout: 600, ticket_webhook: { url: tickets.url, secret: 'desk-ticketing-secret-0123' } }]
    },
    callbacks: { backoff_initial_ms: 50, backoff_max_ms: 200 },
  })
  await stack.startSim()
  const first = await stack.startDaemon()
  // callback_url: its accepted record is durable before the reply, so recovery knows the request.
  const r = await stack.call('call_group', { group_name: 'desk', destination: 'callee', callback_url: results.url })
  t.equal(r.status, 200, JSON.stringify(r.json))
  await waitFor('call.started delivered', () => tickets.received.some((x) => x.status === 204 && x.body.includes('"call.started"')), 10_000)
  first.signal('SIGKILL')
  await first.exited

  await stack.startDaemon()
  await waitFor('call.ended', () => tickets.received.some((x) => x.status === 204 && x.body.includes('"call.ended"')), 40_000)
  await sleep(1000)
  // A notice whose ack the kill cut off is sent again after the restart, under its own delivery id.
  const ok = tickets.received.filter((x) => x.status === 204)
  const once = ok.filter((x, i) => ok.findIndex((y) => y.deliveryId === x.deliveryId) === i)
  const delivered = once.map((x) => JSON.parse(x.body) as { event: string; request_id: string; group: { name: string }; answered_uuid?: string })
  t.same(delivered.map((e) => e.event), ['call.started', 'call.answered', 'call.ended'], 'each once (repeats only with the same delivery id), in order, across the kill')
  t.ok(delivered.every((e) => e.request_id === r.requestId && e.group.name === 'desk'))
  t.equal(delivered[2]?.answered_uuid, r.json?.uuids?.[0], 'the answered leg')
})
