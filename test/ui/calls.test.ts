/**
 * The live calls page's model (src/ui/static/calls.js) without a browser: what a CTI message
 * does to the table, and the text of each cell. The page file is plain JavaScript for the
 * browser, so it is imported by URL and given its shape here.
 */
import t from 'tap'

interface Channel {
  uuid: string
  direction: string | null
  peer_location: string
  calling_name: string | null
  calling_number: string | null
  called_number: string | null
  offer_at: number
  answer_at: number | null
  hangup_at: number | null
  other_uuid: string | null
  user_id: string | null
  state: string
  end_user: Record<string, string> | null
  recording?: boolean
}
interface Calls {
  domain: string | null
  limit: number | null
  controls: boolean
  channels: Map<string, Channel>
  seq: number
}
interface Row {
  uuid: string
  who: string
  user: string
  endUser: string
  direction: string
  state: string
  duration: string
  peer: string
  commandable: boolean
}
interface CallsModule {
  createCalls(controls?: boolean): Calls
  applyMessage(calls: Calls, msg: unknown): { kind: string; channel?: Channel; event?: string; description?: string }
  liveCount(calls: Calls): number
  rowsOf(calls: Calls, nowMs: number): Row[]
  endUserText(endUser: unknown): string
  durationText(ch: Channel, nowMs: number): string
}

const T0 = 1_795_327_733_643
const channel = (over: Partial<Channel>): Channel => ({
  uuid: 'u',
  direction: 'outbound',
  peer_location: 'internal',
  calling_name: null,
  calling_number: null,
  called_number: null,
  offer_at: T0,
  answer_at: null,
  hangup_at: null,
  other_uuid: null,
  user_id: null,
  state: 'calling',
  end_user: null,
  ...over,
})

t.test('the model', async (t) => {
  const m = (await import(new URL('../../src/ui/static/calls.js', import.meta.url).href)) as CallsModule
  const alice = channel({ uuid: 'a', called_number: 'alice', calling_number: '1002', user_id: '1', state: 'answered', answer_at: T0 + 1000, recording: true })
  const pstn = channel({ uuid: 'b', called_number: '0311112222', peer_location: 'external', other_uuid: 'a', offer_at: T0 + 1500, state: 'ringing', end_user: { name: 'Jane', organization: 'ACME' } })
  const phone = channel({ uuid: 'c', direction: 'inbound', calling_number: 'bob', called_number: '1001', user_id: '2', offer_at: T0 - 5000 })

  t.test('snapshot, added, updated, removed', async (t) => {
    const calls = m.createCalls()
    t.same(m.applyMessage(calls, { type: 'initial_info', seq: 0, connection: { domain: 'example.test', channel_limit: 20 }, channels: [alice] }), { kind: 'snapshot' })
    t.equal(calls.domain, 'example.test')
    t.equal(calls.limit, 20)
    t.equal(m.applyMessage(calls, { type: 'info_event', seq: 1, event: 'added', channel: pstn }).kind, 'added')
    t.equal(m.applyMessage(calls, { type: 'info_event', seq: 2, event: 'added', channel: phone }).kind, 'added')
    t.equal(m.liveCount(calls), 3)
    const hungUp = { ...phone, state: 'hangup', hangup_at: T0 + 2000 }
    t.equal(m.applyMessage(calls, { type: 'info_event', seq: 3, event: 'updated', channel: hungUp }).kind, 'updated')
    t.equal(calls.channels.get('c')?.state, 'hangup', 'the whole channel replaces the one held')
    t.equal(m.liveCount(calls), 2, 'a hung-up channel no longer counts against the limit')
    t.equal(m.applyMessage(calls, { type: 'info_event', seq: 4, event: 'removed', channel: hungUp }).kind, 'removed')
    t.same([...calls.channels.keys()], ['a', 'b'])
    t.equal(calls.seq, 4)
    // A new snapshot (a reconnection) starts again from scratch.
    m.applyMessage(calls, { type: 'initial_info', seq: 0, connection: { domain: 'example.test', channel_limit: null }, channels: [] })
    t.equal(calls.channels.size, 0)
    t.equal(calls.limit, null, 'a connection not told the limit shows none')
  })

  t.test('messages it cannot use change nothing', async (t) => {
    const calls = m.createCalls()
    m.applyMessage(calls, { type: 'initial_info', connection: { domain: 'd', channel_limit: 5 }, channels: [alice, { uuid: 7 }, null] })
    t.equal(calls.channels.size, 1, 'a malformed channel of the snapshot is skipped')
    for (const bad of [null, 'text', 42, { type: 'info_event', event: 'added', channel: { uuid: 'x' } }, { type: 'result', result_code: 0 }, { type: 'nonsense' }]) {
      t.equal(m.applyMessage(calls, bad).kind, 'ignored', JSON.stringify(bad))
    }
    t.same(m.applyMessage(calls, { type: 'system', event: 'connection_limit_reached', description: 'at most 2' }), { kind: 'system', event: 'connection_limit_reached', description: 'at most 2' })
    t.equal(calls.channels.size, 1)
  })

  t.test('the cells', async (t) => {
    const calls = m.createCalls(true)
    // The page's connection is read-only in every mode; the buttons are the page's (HTTP control).
    m.applyMessage(calls, { type: 'initial_info', connection: { domain: 'd', channel_limit: 5, read_only: true }, channels: [alice, pstn, phone] })
    const rows = m.rowsOf(calls, T0 + 75_000)
    t.same(rows.map((r) => r.uuid), ['c', 'a', 'b'], 'oldest offer first')
    t.same(rows[1], { uuid: 'a', who: 'alice', user: 'user 1', endUser: '—', direction: 'outbound', state: 'answered', recording: true, duration: '1:14', peer: '0311112222', commandable: true }, 'an outbound user leg: the user it rings; its peer found from the other side')
    t.same(rows[2], { uuid: 'b', who: '0311112222', user: '', endUser: 'Jane (ACME)', direction: 'outbound', state: 'ringing', recording: false, duration: '1:13', peer: 'alice', commandable: true }, 'a PSTN leg: the number; duration from the offer while ringing')
    t.same(rows[0], { uuid: 'c', who: 'bob', user: 'user 2', endUser: '—', direction: 'inbound', state: 'calling', recording: false, duration: '1:20', peer: '—', commandable: true }, 'an inbound leg: who calls')
    t.equal(m.rowsOf(calls, T0 - 60_000)[1]?.duration, '0:00', 'a browser clock behind the switch shows 0:00, never a negative time')
    t.equal(m.durationText(channel({ answer_at: T0 }), T0 + 3_725_000), '1:02:05', 'hours')
    // The buttons of a row: none on a hung-up leg, none at all when watching only.
    m.applyMessage(calls, { type: 'info_event', seq: 1, event: 'updated', channel: { ...phone, state: 'hangup', hangup_at: T0 + 1 } })
    t.equal(m.rowsOf(calls, T0)[0]?.commandable, false, 'a hung-up leg takes no command')
    for (const watching of [m.createCalls(false), m.createCalls()]) {
      m.applyMessage(watching, { type: 'initial_info', connection: { domain: 'd', read_only: true }, channels: [alice] })
      t.same(m.rowsOf(watching, T0).map((r) => r.commandable), [false], 'watching only (the default): no command on a live leg')
    }
    t.equal(m.durationText(channel({ answer_at: T0, hangup_at: T0 + 9_000 }), T0 + 60_000), '0:09', 'a hung-up leg stops counting')
    t.equal(m.endUserText({ id: 'c-1' }), 'c-1')
    t.equal(m.endUserText({ organization: 'ACME' }), 'ACME')
    t.equal(m.endUserText(null), '—')
    t.equal(m.endUserText({ name: '<b>x</b>' }), '<b>x</b>', 'text stays text (table.js writes it with textContent)')
    const lonely = m.createCalls()
    m.applyMessage(lonely, { type: 'initial_info', connection: {}, channels: [channel({ uuid: 'x', other_uuid: 'gone', called_number: '1' }), channel({ uuid: 'y', peer_location: 'external', called_number: '2' })] })
    t.same(m.rowsOf(lonely, T0).map((r) => r.peer), ['another channel', 'PSTN'])
    t.equal(m.rowsOf(m.createCalls(), T0).length, 0)
  })
})
