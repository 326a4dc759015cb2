/**
 * A recorded call across a daemon SIGKILL (issue 28, "Done when": recording callbacks arrive
 * exactly once across a SIGKILL): the daemon as a child process, the simulator in a process of its
 * own (it records as FreeSWITCH does and goes on while no daemon runs). The daemon is killed while
 * the recorded call talks; the call ends while no daemon runs (FreeSWITCH finishes the file); the
 * next daemon finds the record its predecessor left `recording`, asks FreeSWITCH whether the leg is
 * still there (uuid_exists), completes the record from the file, and posts its notice to the
 * domain's recording.callback_url (the request's own URL died with the first daemon): once.
 */
import t from 'tap'
import { faultStack, sleep, waitFor } from '../faults/harness/stack.js'
import { faultyReceiver } from '../faults/harness/receiver.js'

t.setTimeout(120_000)

type Doc = Record<string, unknown>

t.test('SIGKILL during a recorded call: the next daemon completes the recording and tells it once', async (t) => {
  const rx = await faultyReceiver(t)
  const stack = await faultStack(t, {
    domainEdit: (doc: Doc) => {
      doc['recording'] = { mode: 'on_request', callback_url: `${rx.url}?domain` }
      // Answers at once and talks 4 s (delays x0.1), long enough to outlast the kill.
      ;(doc['users'] as Doc[]).push({ id: '21', name: 'talk', extension: '1021', password: 'talk-sip-secret', sim: { terminals: [{ answer_after: 2, hangup_after: 40 }] } })
    },
    callbacks: { backoff_initial_ms: 50, backoff_max_ms: 200 },
  })
  await stack.startSim()
  const first = await stack.startDaemon()
  const r = await stack.call('call_user', { user_name: 'talk', destination: 'callee', record: true, recording_callback_url: rx.url })
  t.equal(r.status, 200, JSON.stringify(r.json))
  await waitFor('the call bridged (two legs)', () => (stack.observer.channelsByRequest.get(r.requestId) ?? 0) >= 2, 10_000)
  // The first daemon wrote the record at RECORD_START (the store's folder beside its journal).
  await sleep(300)
  first.signal('SIGKILL')
  await first.exited

  await waitFor('the recorded call ended while no daemon ran', () => ![...stack.observer.live.values()].some((c) => c.requestId === r.requestId), 15_000)
  t.equal(rx.received.length, 0, 'nothing was told before the kill')

  await stack.startDaemon()
  await waitFor('the recording notice', () => rx.received.some((x) => x.status >= 200 && x.status < 300 && x.body.includes('"recording.')), 20_000)
  await sleep(1000)
  const notices = rx.received.filter((x) => x.body.includes('"recording.'))
  t.equal(new Set(notices.map((n) => n.deliveryId)).size, 1, 'one notice (repeats, if any, with the same delivery id)')
  const body = JSON.parse(notices[0]?.body ?? '{}') as { event: string; recording: { status: string; bytes: number; request_id: string; duration_ms: number | null } }
  t.equal(body.event, 'recording.completed')
  t.equal(body.recording.request_id, r.requestId)
  t.ok(body.recording.bytes > 44, `the file FreeSWITCH finished while the daemon was away (${body.recording.bytes} bytes)`)
  t.ok((body.recording.duration_ms ?? 0) > 0, `its duration read from the WAV header (${body.recording.duration_ms} ms)`)
})
