/**
 * Issue 29 on the real switch: the live calls over HTTP (src/api/calls/) and a call's time_limit
 * and send_digits, each checked in what FreeSWITCH itself reports (the lane's ESL tap, and a
 * connection of this module's own for the hold events the tap does not follow). lane.realfs.ts
 * calls callsOverHttp with its real world; the simulator's side of the same rules is
 * test/sim/on-answer.test.ts and test/api/calls.test.ts.
 *
 * What is seen where:
 * - GET /calls shows a bridged call's two legs; hangup ends a leg with the cause asked
 *   (its CHANNEL_HANGUP_COMPLETE);
 * - dtmf: `uuid_recv_dtmf` queues the digits on the leg, which fires one DTMF event per digit
 *   (switch_channel.c switch_channel_queue_dtmf), and the bridge passes them to the other party;
 * - hold/unhold: CHANNEL_HOLD / CHANNEL_UNHOLD (switch_ivr.c switch_ivr_hold, switch_ivr_unhold);
 * - transfer to erin: a new leg rings erin's terminal;
 * - time_limit: the originating leg hangs up ALLOTTED_TIMEOUT within 1 s of the limit after its
 *   answer, by the switch's own clock (Event-Date-Timestamp);
 * - send_digits: FreeSWITCH fires no event for digits it sends out to a phone (DTMF events are for
 *   digits received), so what is seen is the send_dtmf application with the digits running on the
 *   answered leg (its CHANNEL_EXECUTE), before the bridge;
 * - record start/stop (uuid_record, esl/48-uuid-record.txt): RECORD_START and RECORD_STOP on the
 *   leg, and the recording fetched through the recordings API is the file FreeSWITCH wrote, a
 *   stereo WAV of the time between them (±1 s), not silence (a tone played into the call).
 */
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import type { Test } from 'tap'
import type { RecordedEvent } from './esl-tap.js'
import { AUTH, waitUntil, type RealWorld } from './world.js'
import { rms } from './wav.js'

/** An ESL connection of this module's own that records the events it subscribes to. */
class EventWatch {
  readonly events: RecordedEvent[] = []
  private buf = Buffer.alloc(0)

  private constructor(private readonly socket: Socket) {}

  static async open(port: number, password: string, events: readonly string[]): Promise<EventWatch> {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const watch = new EventWatch(socket)
    socket.on('data', (chunk: Buffer) => watch.onData(chunk))
    socket.on('error', () => undefined)
    socket.write(`auth ${password}\n\nevent json ${events.join(' ')}\n\n`)
    return watch
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk])
    for (;;) {
      const end = this.buf.indexOf('\n\n')
      if (end < 0) return
      const headers: Record<string, string> = {}
      for (const line of this.buf.subarray(0, end).toString().split('\n')) {
        const i = line.indexOf(':')
        if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim()
      }
      const len = Number(headers['Content-Length'] ?? '0')
      if (this.buf.length < end + 2 + len) return
      const body = this.buf.subarray(end + 2, end + 2 + len).toString()
      this.buf = this.buf.subarray(end + 2 + len)
      if (headers['Content-Type'] === 'text/event-json') {
        const parsed = JSON.parse(body) as Record<string, string>
        this.events.push({ at: Date.now(), name: parsed['Event-Name'] ?? '', headers: parsed })
      }
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

interface Reply {
  readonly status: number
  readonly body: Record<string, unknown>
}

interface CallView {
  readonly uuid: string
  readonly state: string
  readonly other_uuid: string | null
  readonly request_id: string | null
  readonly user_id: string | null
}

/** Microseconds of the switch's clock at which it fired the event. */
const micros = (e: RecordedEvent): number => Number(e.headers['Event-Date-Timestamp'] ?? '0')
const uuidOf = (e: RecordedEvent): string => e.headers['Unique-ID'] ?? ''

/**
 * The lane's scenarios of issue 29 on the real switch (`world`), with the lane's ESL password for
 * a connection of their own. Each leaves no channel behind.
 */
export async function callsOverHttp(t: Test, world: RealWorld, eslPassword: string): Promise<void> {
  const base = `${world.daemon.baseUrl}/api/calls`
  const http = async (path: string, body?: unknown): Promise<Reply> => {
    const res = await fetch(`${base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const tap = world.tap
  const watch = await EventWatch.open(world.eslPort, eslPassword, ['CHANNEL_HOLD', 'CHANNEL_UNHOLD'])
  t.teardown(() => watch.close())

  /** alice calls bob (call_user): resolves with alice's answered leg and bob's, once bridged. */
  const bridgedCall = async (t: Test, extra: Record<string, unknown> = {}) => {
    // Whatever a failing check leaves up is hung up before the next scenario.
    t.teardown(async () => {
      await tap.api('hupall NORMAL_CLEARING cod_domain example.test')
      await world.idle()
    })
    const from = tap.events.length
    const placed = await world.post('call_user', { user_name: 'alice', destination: 'bob', ...extra })
    t.equal(placed.status, 200, `call_user placed (${JSON.stringify(placed.body)})`)
    const bridge = await waitUntil('the bridge', () => tap.events.slice(from).find((e) => e.name === 'CHANNEL_BRIDGE'), 15_000)
    const a = uuidOf(bridge)
    const b = bridge.headers['Other-Leg-Unique-ID'] ?? bridge.headers['Bridge-B-Unique-ID'] ?? ''
    return { from, a, b }
  }
  const hangupOf = (from: number, uuid: string) => () =>
    tap.events.slice(from).find((e) => e.name === 'CHANNEL_HANGUP_COMPLETE' && uuidOf(e) === uuid)

  await t.test('GET /calls shows the bridged call; dtmf, hold, unhold and hangup act on it', async (t) => {
    const { from, a, b } = await bridgedCall(t)
    // The daemon's model follows the events: wait until it shows both legs bridged.
    let calls: CallView[] = []
    const deadline = Date.now() + 5000
    const bothBridged = () => calls.filter((c) => (c.uuid === a || c.uuid === b) && c.state === 'bridged').length === 2
    while (Date.now() < deadline) {
      calls = ((await http('')).body.calls ?? []) as CallView[]
      if (bothBridged()) break
      await new Promise((r) => setTimeout(r, 50))
    }
    t.ok(bothBridged(), `both legs listed, bridged (${JSON.stringify(calls.map((c) => [c.uuid === a ? 'A' : c.uuid === b ? 'B' : c.uuid, c.state]))})`)
    const one = await http(`/${a}`)
    t.equal(one.status, 200)
    const call = one.body.call as CallView
    t.equal(call.other_uuid, b, "alice's leg names bob's as its other leg")
    t.equal(call.user_id, '1')
    const byRequest = ((await http(`?request_id=${encodeURIComponent(call.request_id ?? '')}`)).body.calls ?? []) as CallView[]
    t.ok(byRequest.some((c) => c.uuid === a), 'the request_id filter finds it')
    const byUser = ((await http('?user=bob')).body.calls ?? []) as CallView[]
    t.ok(byUser.some((c) => c.uuid === b), "the user filter finds bob's leg")

    const dtmfFrom = tap.events.length
    t.same(await http(`/${a}/dtmf`, { digits: '1#' }), { status: 200, body: { result_code: 0 } })
    const digits = await waitUntil(
      'two DTMF events on alice\'s leg',
      () => {
        const seen = tap.events.slice(dtmfFrom).filter((e) => e.name === 'DTMF' && uuidOf(e) === a)
        return seen.length >= 2 ? seen : undefined
      },
      5000,
    )
    t.same(digits.map((e) => e.headers['DTMF-Digit']), ['1', '#'], 'the digits, in order, on the leg')

    const holdFrom = watch.events.length
    t.same(await http(`/${a}/hold`, {}), { status: 200, body: { result_code: 0 } })
    await waitUntil('CHANNEL_HOLD', () => watch.events.slice(holdFrom).find((e) => e.name === 'CHANNEL_HOLD' && uuidOf(e) === a), 5000)
    t.same(await http(`/${a}/unhold`, {}), { status: 200, body: { result_code: 0 } })
    await waitUntil('CHANNEL_UNHOLD', () => watch.events.slice(holdFrom).find((e) => e.name === 'CHANNEL_UNHOLD' && uuidOf(e) === a), 5000)
    t.pass('hold and unhold seen in FreeSWITCH\'s events')

    t.same(await http(`/${b}/hangup`, { cause: 'USER_BUSY' }), { status: 200, body: { result_code: 0 } })
    const ended = await waitUntil("bob's leg hung up", hangupOf(from, b), 5000)
    t.equal(ended.headers['Hangup-Cause'], 'USER_BUSY', 'with the cause asked')
    await waitUntil("alice's leg hung up too", hangupOf(from, a), 5000)
    const gone = await http(`/${b}/hangup`, {})
    t.equal(gone.status, 404, 'a leg that is gone: channel_not_found')
    await world.idle()
  })

  await t.test('record start and stop on a bridged call: a playable stereo WAV through the recordings API', async (t) => {
    const { from, a } = await bridgedCall(t)
    const started = await http(`/${a}/record`, { action: 'start' })
    t.equal(started.status, 200, `started (${JSON.stringify(started.body)})`)
    const id = (started.body.recording as { id: string }).id
    const recStart = await waitUntil('RECORD_START', () => tap.events.slice(from).find((e) => e.name === 'RECORD_START' && uuidOf(e) === a && e.headers['variable_cod_recording_id'] === id), 5000)
    t.match(await tap.api(`uuid_broadcast ${a} tone_stream://%(2000,0,440) aleg`), /^\+OK/, 'a 440 Hz tone played to the leg')
    t.equal((await http(`/${a}/record`, { action: 'start' })).status, 409, 'a second start: recording_conflict')
    await new Promise((r) => setTimeout(r, 2500))
    t.same(await http(`/${a}/record`, { action: 'stop' }), { status: 200, body: { result_code: 0 } })
    const recStop = await waitUntil('RECORD_STOP', () => tap.events.slice(from).find((e) => e.name === 'RECORD_STOP' && uuidOf(e) === a), 5000)
    // The daemon completes the record from RECORD_STOP (recording/follow.ts): asked until it says so.
    let recorded: { status: string; duration_ms: number | null } | undefined
    for (const deadline = Date.now() + 5000; Date.now() < deadline && recorded?.status !== 'completed'; await new Promise((r) => setTimeout(r, 50))) {
      const res = await fetch(`${world.daemon.baseUrl}/api/recordings/${id}`, { headers: { authorization: AUTH } })
      recorded = ((await res.json()) as { recording?: { status: string; duration_ms: number | null } }).recording
    }
    t.equal(recorded?.status, 'completed', 'the recording completed')
    const file = readFileSync(recStop.headers['Record-File-Path'] ?? '')
    const res = await fetch(`${world.daemon.baseUrl}/api/recordings/${id}/audio`, { headers: { authorization: AUTH } })
    t.equal(res.status, 200)
    const served = Buffer.from(await res.arrayBuffer())
    t.ok(served.equals(file), `the API serves the file FreeSWITCH wrote (${served.length} bytes)`)
    t.equal(file.toString('latin1', 0, 4), 'RIFF')
    t.equal(file.readUInt16LE(20), 1, 'PCM')
    t.equal(file.readUInt16LE(22), 2, 'stereo')
    const wavMs = ((file.length - 44) / (file.readUInt32LE(24) * 2 * 2)) * 1000
    const recordedMs = (micros(recStop) - micros(recStart)) / 1000
    t.ok(Math.abs(wavMs - recordedMs) <= 1000, `the WAV lasts from start to stop: ${Math.round(wavMs)} ms against ${Math.round(recordedMs)} ms`)
    t.ok(Math.abs((recorded?.duration_ms ?? 0) - recordedMs) <= 1000, `its record says so (${recorded?.duration_ms} ms)`)
    t.ok(Math.max(rms(file, 0, 2), rms(file, 1, 2)) > 500, `not silence (RMS ${Math.round(rms(file, 0, 2))} left, ${Math.round(rms(file, 1, 2))} right)`)
    t.equal((await http(`/${a}/record`, { action: 'stop' })).status, 409, 'nothing left to stop')
    t.same(await http(`/${a}/hangup`, {}), { status: 200, body: { result_code: 0 } })
    await waitUntil("alice's leg hung up", hangupOf(from, a), 5000)
    await world.idle()
  })

  await t.test('transfer to another user rings that user', async (t) => {
    const { from, a } = await bridgedCall(t)
    const xferFrom = tap.events.length
    t.same(await http(`/${a}/transfer`, { destination: 'erin' }), { status: 200, body: { result_code: 0 } })
    const ringing = await waitUntil(
      "a leg to erin's terminal",
      () => tap.events.slice(xferFrom).find((e) => e.name === 'CHANNEL_CREATE' && uuidOf(e) !== a && (e.headers['variable_dialed_user'] === 'erin' || /erin/.test(e.headers['Channel-Name'] ?? ''))),
      10_000,
    )
    t.ok(ringing, `erin rings (${ringing.headers['Channel-Name'] ?? ''})`)
    t.same(await http(`/${a}/hangup`, {}), { status: 200, body: { result_code: 0 } })
    await waitUntil("alice's leg hung up", hangupOf(from, a), 5000)
    await world.idle()
  })

  await t.test('time_limit: 3 cuts the bridged call within 1 s of 3 s after the answer, ALLOTTED_TIMEOUT', async (t) => {
    const { from, a } = await bridgedCall(t, { time_limit: 3 })
    const answered = tap.events.slice(from).find((e) => e.name === 'CHANNEL_ANSWER' && uuidOf(e) === a)
    const hangup = await waitUntil("alice's leg cut", () => tap.events.slice(from).find((e) => e.name === 'CHANNEL_HANGUP' && uuidOf(e) === a), 8000)
    t.equal(hangup.headers['Hangup-Cause'], 'ALLOTTED_TIMEOUT')
    const seconds = (micros(hangup) - (answered === undefined ? 0 : micros(answered))) / 1e6
    t.ok(answered !== undefined && Math.abs(seconds - 3) <= 1, `hung up ${seconds.toFixed(3)} s after the answer`)
    await world.idle()
  })

  await t.test('send_digits: the send_dtmf application runs on the answered leg with the digits', async (t) => {
    const { from, a } = await bridgedCall(t, { send_digits: '12w#' })
    const executed = tap.events.slice(from).find((e) => e.name === 'CHANNEL_EXECUTE' && uuidOf(e) === a && e.headers['Application'] === 'send_dtmf')
    t.equal(executed?.headers['Application-Data'], '12w#', 'send_dtmf 12w# on alice\'s leg')
    const answerAt = tap.events.slice(from).findIndex((e) => e.name === 'CHANNEL_ANSWER' && uuidOf(e) === a)
    const sentAt = tap.events.slice(from).findIndex((e) => e === executed)
    t.ok(answerAt >= 0 && sentAt > answerAt, 'after the answer')
    t.same(await http(`/${a}/hangup`, {}), { status: 200, body: { result_code: 0 } })
    await world.idle()
  })
}
