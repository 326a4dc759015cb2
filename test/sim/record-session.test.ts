/**
 * record_session in the simulator against the real FreeSWITCH 1.10.12 captures
 * test/fixtures/freeswitch/esl/28-31 (docs/recording.md "How FreeSWITCH records"): the same A-leg
 * event order, the same RECORD_START / RECORD_STOP headers and variables, a real WAV of the
 * recorded length (stereo with RECORD_STEREO, only the bridged time with RECORD_BRIDGE_REQ), and
 * an unwritable path that fires nothing while the call goes on.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { capturedEvents, type CapturedEvent } from './captured-events.js'
import { startSim, type Ev, type RawEsl } from './helpers.js'
import { act, dialplan, NOT_FOUND, section, xmlServer } from './xml-server.js'

const A = 'aaaaaaaa-2222-4222-8222-0000000000a1'
const EVENTS =
  'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_UNBRIDGE CHANNEL_EXECUTE CHANNEL_EXECUTE_COMPLETE CHANNEL_HANGUP CHANNEL_HANGUP_COMPLETE CHANNEL_DESTROY RECORD_START RECORD_STOP BACKGROUND_JOB'

/** A simulator whose dialplan runs `actions` on the answered A leg (alice, one terminal), and a folder for the files. */
async function world(t: { teardown: (fn: () => unknown) => void }, actions: string, prepare: (dir: string) => Promise<void> = async () => undefined) {
  const dir = await mkdtemp(join(tmpdir(), 'cod-sim-rec-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await prepare(dir)
  const srv = await xmlServer(t, (r) => (section(r) === 'dialplan' ? { body: dialplan('example.test', actions.replaceAll('@DIR@', dir)) } : { body: NOT_FOUND }))
  const { sim, connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'freeswitch', password: 'xml-secret' } })
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  const c = await connect()
  await c.login('ClueCon', EVENTS)
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=20}user/alice@example.test cod_route XML example.test`)
  return { dir, sim, c }
}

const destroyed = (c: RawEsl, uuid: string): Promise<Ev> => c.waitFor((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === uuid)
const eventOf = (events: readonly Ev[] | readonly CapturedEvent[], name: string): Ev | undefined => (events as Ev[]).find((e) => e['Event-Name'] === name)

/** The A leg's events from its record_session on, as `NAME app`. */
function fromRecordSession(events: ReadonlyArray<Record<string, unknown>>, a: string): string[] {
  const list = events.filter((e) => e['Unique-ID'] === a).map((e) => `${String(e['Event-Name'])}${e['Application'] !== undefined ? ` ${String(e['Application'])}` : ''}`)
  return list.slice(list.indexOf('CHANNEL_EXECUTE record_session'))
}
/** The A leg of a capture: the first channel created (the originate's). */
const capturedA = (events: readonly CapturedEvent[]): string => events.find((e) => e['Event-Name'] === 'CHANNEL_CREATE')?.['Unique-ID'] ?? ''

/** The header names of an event that are not variables or caller profiles (those depend on the call). */
const ownHeaders = (e: Record<string, unknown>): string[] => Object.keys(e).filter((k) => !/^(variable_|Caller-|Other-Leg-)/.test(k)).sort()

interface Wav {
  readonly channels: number
  readonly rate: number
  readonly bits: number
  readonly frames: number
  /** RMS per channel. */
  readonly rms: number[]
}

function readWav(t: Test, b: Buffer): Wav {
  const channels = b.readUInt16LE(22)
  const frames = b.readUInt32LE(40) / (channels * 2)
  const rms = Array.from({ length: channels }, (_, c) => {
    let sum = 0
    for (let i = 0; i < frames; i++) sum += b.readInt16LE(44 + (i * channels + c) * 2) ** 2
    return Math.sqrt(sum / Math.max(1, frames))
  })
  t.equal(b.toString('latin1', 0, 4) + b.toString('latin1', 8, 16) + b.toString('latin1', 36, 40), 'RIFFWAVEfmt data', 'the canonical 44-byte layout')
  t.equal(b.readUInt16LE(20), 1, 'PCM')
  t.equal(b.readUInt32LE(4), b.length - 8, 'RIFF size')
  t.equal(b.readUInt32LE(40), b.length - 44, 'data size')
  return { channels, rate: b.readUInt32LE(24), bits: b.readUInt16LE(34), frames, rms }
}

t.test('a recorded bridge (esl/28): RECORD_START at record_session, the bridged time in stereo, RECORD_STOP before HANGUP_COMPLETE', async (t) => {
  const { dir, sim, c } = await world(
    t,
    act('set', 'hangup_after_bridge=true') + act('set', 'RECORD_STEREO=true') + act('set', 'RECORD_BRIDGE_REQ=true') +
      act('record_session', '@DIR@/recordings/example.test/a.wav') + act('bridge', 'user/bob@example.test'),
  )
  const path = join(dir, 'recordings/example.test/a.wav')
  const bridge = await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  await new Promise((r) => setTimeout(r, 300))
  t.ok(sim.remoteHangup(A), 'alice hangs up (BYE)')
  await destroyed(c, A)
  const events = c.events()
  const captured = capturedEvents('28-record-session-bridge.txt')
  t.same(fromRecordSession(events, A), fromRecordSession(captured, capturedA(captured)), 'the A leg\'s events in the capture\'s order')

  const start = eventOf(events, 'RECORD_START') as Ev
  const stop = eventOf(events, 'RECORD_STOP') as Ev
  t.same(ownHeaders(start), ownHeaders(eventOf(captured, 'RECORD_START') as CapturedEvent), 'RECORD_START: the capture\'s headers')
  t.same(ownHeaders(stop), ownHeaders(eventOf(captured, 'RECORD_STOP') as CapturedEvent), 'RECORD_STOP: the capture\'s headers')
  t.equal(start['Record-File-Path'], path)
  t.equal(start['Event-Calling-Function'], 'record_callback')
  t.equal(start['Answer-State'], 'answered')
  t.equal(stop['Record-File-Path'], path)
  t.equal(stop['Record-Completion-Cause'], 'success-silence')
  t.equal(stop['variable_record_completion_cause'], 'success-silence')
  t.equal(stop['Event-Calling-Function'], 'send_record_stop_event')
  t.same([stop['Channel-State'], stop['Answer-State'], stop['Hangup-Cause']], ['CS_HANGUP', 'hangup', 'NORMAL_CLEARING'])

  // The length is the bridged time (CHANNEL_BRIDGE to the hangup), in whole 20 ms frames.
  const hangup = events.find((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A) as Ev
  const bridgedMs = (Number(hangup['Event-Date-Timestamp']) - Number(bridge['Event-Date-Timestamp'])) / 1000
  const ms = Number(stop['variable_record_ms'])
  t.ok(Math.abs(ms - bridgedMs) <= 40, `record_ms ${ms} is the bridged ${bridgedMs.toFixed(0)} ms`)
  t.equal(ms % 20, 0)
  t.equal(Number(stop['variable_record_samples']), ms * 8)
  t.equal(stop['variable_record_seconds'], String(Math.floor(ms / 1000)))

  const file = await readFile(path)
  t.equal(stop['variable_record_file_size'], String(file.length))
  const wav = readWav(t, file)
  t.same([wav.channels, wav.rate, wav.bits, wav.frames], [2, 8000, 16, ms * 8], 'stereo 16-bit 8000 Hz, the recorded length')
  t.ok(wav.rms.every((r) => r > 1000), `a tone on both channels (rms ${wav.rms.map((r) => r.toFixed(0)).join('/')})`)
})

t.test('a path that cannot be written (esl/29): no RECORD_* event, uri-failure on the channel, the call goes on', async (t) => {
  for (const [name, target] of [
    ['a folder that cannot be made', '@DIR@/blocker/example.test/b.wav'],
    ['a file that cannot be opened', '@DIR@/a-folder.wav'],
  ] as const) {
    await t.test(name, async (t) => {
      const actions = act('set', 'hangup_after_bridge=true') + act('set', 'RECORD_STEREO=true') + act('record_session', target) + act('bridge', 'user/bob@example.test')
      // Both hold for root too (a test run as root writes into a read-only folder all the same).
      const { dir, sim, c } = await world(t, actions, async (dir) => {
        await writeFile(join(dir, 'blocker'), 'a file where a folder should be')
        await mkdir(join(dir, 'a-folder.wav'))
      })
      await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
      t.ok(sim.remoteHangup(A))
      await destroyed(c, A)
      const events = c.events()
      const captured = capturedEvents('29-record-session-unwritable.txt')
      t.same(fromRecordSession(events, A), fromRecordSession(captured, capturedA(captured)), 'the capture\'s events: no RECORD_START or RECORD_STOP, a bridge')
      const done = events.find((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE' && e['Application'] === 'record_session') as Ev
      t.equal(done['variable_record_completion_cause'], 'uri-failure')
      t.equal(eventOf(events, 'CHANNEL_HANGUP_COMPLETE')?.['Hangup-Cause'], 'NORMAL_CLEARING')
      t.notOk(existsSync(join(dir, 'blocker/example.test')))
    })
  }
})

t.test('a bridge that never connects (esl/30): RECORD_STOP empty-file and no file left', async (t) => {
  const { dir, c } = await world(
    t,
    act('set', 'hangup_after_bridge=true') + act('set', 'continue_on_fail=true') + act('set', 'RECORD_STEREO=true') + act('set', 'RECORD_BRIDGE_REQ=true') +
      act('record_session', '@DIR@/example.test/c.wav') + act('bridge', 'user/carol@example.test') + act('hangup', '${originate_disposition}'),
  )
  await destroyed(c, A)
  const events = c.events()
  const captured = capturedEvents('30-record-session-bridge-fails.txt')
  t.same(fromRecordSession(events, A), fromRecordSession(captured, capturedA(captured)))
  const stop = eventOf(events, 'RECORD_STOP') as Ev
  const real = eventOf(captured, 'RECORD_STOP') as CapturedEvent
  for (const k of ['Record-Completion-Cause', 'Hangup-Cause', 'variable_RECORD_DISCARDED', 'variable_record_file_size', 'variable_record_samples', 'variable_record_ms']) t.equal(stop[k], real[k], k)
  t.notOk(existsSync(join(dir, 'example.test/c.wav')), 'the empty file is removed')
})

t.test('an answered leg without a bridge (esl/31): from record_session to the hangup; mono without RECORD_STEREO', async (t) => {
  const { dir, c } = await world(t, act('record_session', '@DIR@/d.wav') + act('sleep', '4000') + act('hangup'))
  await destroyed(c, A)
  const events = c.events()
  const captured = capturedEvents('31-record-session-answered-leg.txt')
  const names = (list: string[]) => list.map((n) => n.replace(/ (sleep|playback)$/, ' <media>'))
  t.same(names(fromRecordSession(events, A)), names(fromRecordSession(captured, capturedA(captured))))
  const start = eventOf(events, 'RECORD_START') as Ev
  const stop = eventOf(events, 'RECORD_STOP') as Ev
  const ms = Number(stop['variable_record_ms'])
  const hangup = events.find((e) => e['Event-Name'] === 'CHANNEL_HANGUP' && e['Unique-ID'] === A) as Ev
  const expected = (Number(hangup['Event-Date-Timestamp']) - Number(start['Event-Date-Timestamp'])) / 1000
  t.ok(Math.abs(ms - expected) <= 40, `record_ms ${ms} is the time from RECORD_START to the hangup (${expected.toFixed(0)} ms)`)
  const wav = readWav(t, await readFile(join(dir, 'd.wav')))
  t.same([wav.channels, wav.rate, wav.frames], [1, 8000, ms * 8])
  t.ok((wav.rms[0] ?? 0) > 1000, 'not silence')
  t.equal((await stat(join(dir, 'd.wav'))).size, 44 + ms * 16)
})
