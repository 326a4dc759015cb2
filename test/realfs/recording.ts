/**
 * Issue 28 on the real switch: calls recorded by FreeSWITCH itself (record_session in the daemon's
 * dialplan: docs/recording.md "How FreeSWITCH records"), each checked against what FreeSWITCH
 * reports and wrote:
 *
 * - a call_user marked for `sales` (recording `always`), whose A leg hears a tone FreeSWITCH
 *   generates (`uuid_broadcast ... tone_stream`, recorded on the other party's channel: the lane's
 *   phones send no audio): the WAV fetched through the API is byte-identical to the file FreeSWITCH
 *   wrote (RECORD_STOP's Record-File-Path), stereo, lasts the bridged time (CHANNEL_BRIDGE to
 *   CHANNEL_HANGUP, by the switch's clock) within 1 s, and is not silence;
 * - a call_group of `sales` and an initiate_call with `group_name: sales` are recorded too;
 * - a group whose mode is `never` (the lane's `support`) records nothing, and refuses `record: true`.
 *
 * lane.realfs.ts calls recordedCalls with its real world; the simulator's side is
 * test/e2e/recording.test.ts.
 */
import { readFileSync } from 'node:fs'
import type { Test } from 'tap'
import type { RecordedEvent } from './esl-tap.js'
import { AUTH, waitUntil, type RealWorld } from './world.js'
import { rms } from './wav.js'

interface RecordingNotice {
  readonly event: string
  readonly recording: { readonly id: string; readonly legs: readonly string[]; readonly duration_ms: number | null; readonly bytes: number; readonly status: string }
}

const noticeOf = (body: unknown): RecordingNotice | undefined => {
  const n = body as Partial<RecordingNotice> | null
  return typeof n?.event === 'string' && n.event.startsWith('recording.') && n.recording !== undefined ? (n as RecordingNotice) : undefined
}

/** Epoch ms of an event by the switch's clock. */
const at = (e: RecordedEvent): number => Math.floor(Number(e.headers['Event-Date-Timestamp'] ?? 0) / 1000)

/** Places a call that should be recorded, lets it talk `talkMs`, hangs up the far end; its notice and events. */
async function recordedCall(t: Test, real: RealWorld, op: string, body: Record<string, unknown>, talkMs: number, tone: boolean) {
  const from = real.tap.events.length
  const fromNotices = real.callbacks.length
  const reply = await real.post(op, { ...body, recording_callback_url: real.callbackUrl })
  t.equal(reply.status, 200, `${op} placed: ${JSON.stringify(reply.body)}`)
  const bridge = await waitUntil(`${op}: the bridge`, () => real.tap.events.slice(from).find((e) => e.name === 'CHANNEL_BRIDGE' && e.headers['variable_cod_recording_id'] !== undefined), 20_000)
  const a = bridge.headers['Unique-ID'] ?? ''
  if (tone) t.match(await real.tap.api(`uuid_broadcast ${a} tone_stream://%(${talkMs},0,440) aleg`), /^\+OK/, 'a 440 Hz tone played to the A leg')
  await new Promise((r) => setTimeout(r, talkMs))
  await real.remoteHangup(a)
  const stop = await waitUntil(`${op}: RECORD_STOP`, () => real.tap.events.slice(from).find((e) => e.name === 'RECORD_STOP' && e.headers['Unique-ID'] === a), 10_000)
  const hangup = real.tap.events.slice(from).find((e) => e.name === 'CHANNEL_HANGUP' && e.headers['Unique-ID'] === a)
  const notice = await waitUntil(`${op}: the recording notice`, () => real.callbacks.slice(fromNotices).map((c) => noticeOf(c.body)).find((n) => n?.recording.legs.includes(a)), 10_000)
  await real.idle()
  return { a, bridge, stop, hangup, notice }
}

export async function recordedCalls(t: Test, real: RealWorld): Promise<void> {
  await t.test('a call marked for sales: a playable stereo WAV of the bridged time, not silence, byte-identical through the API', async (t) => {
    const { bridge, stop, hangup, notice } = await recordedCall(t, real, 'call_user', { user_name: 'alice', destination: 'bob', group_name: 'sales' }, 3000, true)
    t.equal(notice.event, 'recording.completed')
    const file = readFileSync(stop.headers['Record-File-Path'] ?? '')
    const res = await fetch(`${real.daemon.baseUrl}/api/recordings/${notice.recording.id}/audio`, { headers: { authorization: AUTH } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-type'), 'audio/wav')
    const served = Buffer.from(await res.arrayBuffer())
    t.ok(served.equals(file), `the API serves the file FreeSWITCH wrote, byte for byte (${served.length} bytes)`)
    t.equal(file.toString('latin1', 0, 4), 'RIFF')
    t.equal(file.readUInt16LE(20), 1, 'PCM')
    t.equal(file.readUInt16LE(22), 2, 'stereo: one party per channel')
    const rate = file.readUInt32LE(24)
    const wavMs = ((file.length - 44) / (rate * 2 * 2)) * 1000
    const bridgedMs = (hangup === undefined ? Date.now() : at(hangup)) - at(bridge)
    t.ok(Math.abs(wavMs - bridgedMs) <= 1000, `the WAV lasts the bridged time: ${Math.round(wavMs)} ms against ${bridgedMs} ms`)
    t.ok(Math.abs((notice.recording.duration_ms ?? 0) - bridgedMs) <= 1000, `its record says so too (${notice.recording.duration_ms} ms)`)
    const loudest = Math.max(rms(file, 0, 2), rms(file, 1, 2))
    t.ok(loudest > 500, `not silence: the tone is in it (RMS ${Math.round(rms(file, 0, 2))} left, ${Math.round(rms(file, 1, 2))} right)`)
    t.equal(notice.recording.bytes, file.length)
  })

  await t.test('a call_group of sales and an initiate_call with group_name sales are recorded', async (t) => {
    const group = await recordedCall(t, real, 'call_group', { group_name: 'sales', destination: 'bob' }, 1500, false)
    t.equal(group.notice.event, 'recording.completed', `call_group: ${group.notice.recording.bytes} bytes`)
    const initiate = await recordedCall(t, real, 'initiate_call', { pstn_number: '0399990001', destination: 'bob', group_name: 'sales' }, 1500, false)
    t.equal(initiate.notice.event, 'recording.completed', `initiate_call: ${initiate.notice.recording.bytes} bytes`)
  })

  await t.test('a group that never records: nothing recorded, and record:true refused', async (t) => {
    const refused = await real.post('call_group', { group_name: 'support', destination: 'bob', record: true })
    t.equal(refused.status, 403)
    t.match(refused.body, { error: { id: 'recording_not_allowed' } })
    const from = real.tap.events.length
    const fromNotices = real.callbacks.length
    t.equal((await real.post('call_group', { group_name: 'support', destination: 'alice', recording_callback_url: real.callbackUrl })).status, 200)
    const bridge = await waitUntil('support: the bridge', () => real.tap.events.slice(from).find((e) => e.name === 'CHANNEL_BRIDGE'), 20_000)
    t.equal(bridge.headers['variable_cod_recording_id'], undefined, 'no recording id on the leg')
    await real.remoteHangup(bridge.headers['Unique-ID'] ?? '')
    await real.idle()
    t.notOk(real.tap.events.slice(from).some((e) => e.name === 'RECORD_START'), 'FreeSWITCH recorded nothing')
    t.same(real.callbacks.slice(fromNotices).filter((c) => noticeOf(c.body) !== undefined), [], 'no recording notice')
  })
}
