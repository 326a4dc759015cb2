/**
 * Issue 30 items 1-2 on the real switch: `<Record>` and `<GetInput>` run by the daemon's IVR on a
 * call FreeSWITCH itself makes audible. The lane's SIP phones send no audio, so the caller is a
 * loopback call (mod_loopback, loaded here with mod_test, whose ASR engine `test` the lane's
 * daemon.yaml names: world.ts): `originate loopback/3002/example.test &park()` dials the domain's
 * extension 3002, bound to the application server's `/ext` document; the IVR runs on the loopback
 * B leg, and what FreeSWITCH plays on the A leg (`uuid_broadcast A tone_stream://... aleg`) is what
 * B hears; keys sent on A (`uuid_send_dtmf A`) arrive on B (test/fixtures/freeswitch/esl/40-42 were
 * captured the same way).
 *
 * - Record of a 3 s tone: RecordingDuration 3, a mono WAV fetched through the API that lasts
 *   the tone (FreeSWITCH keeps none of the silence that ended it) and is not silence;
 * - GetInput with the `test` engine and a 1 s tone: mod_test's known transcript, `agent`, at 0.873;
 * - GetInput with keys: 4, then 2 and # while the rest is collected: Digits 42.
 *
 * lane.realfs.ts calls ivrRecordInput with its real world and application server; the simulator's
 * side is test/e2e/ivr-record-input.test.ts.
 */
import type { Test } from 'tap'
import type { RecordedEvent } from './esl-tap.js'
import { AUTH, waitUntil, type AppServer, type RealWorld } from './world.js'
import { rms } from './wav.js'

const EXTENSION = '3002'

/**
 * Dials the extension from a loopback leg whose A side is parked; calls `onApp` at each
 * CHANNEL_EXECUTE of the IVR's (B) leg with A's uuid; resolves with the application server's request
 * for `path` once the document posted there.
 */
async function loopbackCall(real: RealWorld, app: AppServer, path: string, onApp: (e: RecordedEvent, a: string) => void): Promise<URLSearchParams> {
  const a = crypto.randomUUID()
  const fromHits = app.hits.length
  const off = real.tap.onEvent((e) => {
    if (e.name !== 'CHANNEL_EXECUTE') return
    const uuid = e.headers['Unique-ID'] ?? ''
    if (uuid !== a && (e.headers['Channel-Name'] ?? '').startsWith('loopback/') && e.headers['variable_other_loopback_leg_uuid'] === a) onApp(e, a)
  })
  try {
    const job = await real.tap.api(`bgapi originate {origination_uuid=${a},origination_caller_id_number=0311112222}loopback/${EXTENSION}/example.test &park()`)
    if (!job.startsWith('+OK')) throw new Error(`originate: ${job}`)
    const hit = await waitUntil(`a request for ${path}`, () => app.hits.slice(fromHits).find((h) => h.path === path), 30_000)
    return hit.form
  } finally {
    off()
    await real.tap.api(`uuid_kill ${a}`)
    await real.idle()
  }
}

export async function ivrRecordInput(t: Test, real: RealWorld, app: AppServer): Promise<void> {
  for (const mod of ['mod_loopback', 'mod_test']) {
    const loaded = await real.tap.api(`load ${mod}`)
    t.match(loaded, /\+OK|already loaded/, `${mod} loaded`)
  }
  app.documents['/done'] = '<Response><Hangup/></Response>'

  await t.test('Record of a 3 s tone: a WAV of 3 s, not silence, fetched through the API', async (t) => {
    app.documents['/ext'] = `<Response><Record action="${app.base}/done" maxLength="20" timeout="2"/></Response>`
    const form = await loopbackCall(real, app, '/done', (e, a) => {
      if (e.headers['Application'] === 'record') void real.tap.api(`uuid_broadcast ${a} tone_stream://%(3000,0,440) aleg`)
    })
    t.equal(form.get('RecordingDuration'), '3', 'the tone, without the silence that ended it')
    t.equal(form.get('Digits'), '')
    const url = form.get('RecordingUrl') ?? ''
    t.match(url, /^\/api\/recordings\/[0-9a-f-]{36}\/audio$/)
    const res = await fetch(`${real.daemon.baseUrl}${url}`, { headers: { authorization: AUTH } })
    t.equal(res.status, 200)
    const wav = Buffer.from(await res.arrayBuffer())
    t.equal(wav.toString('latin1', 0, 4), 'RIFF')
    t.equal(wav.readUInt16LE(22), 1, 'mono: what the caller said')
    const ms = ((wav.length - 44) / (wav.readUInt32LE(24) * 2)) * 1000
    t.ok(Math.abs(ms - 3000) <= 300, `the WAV lasts the tone: ${Math.round(ms)} ms`)
    t.ok(rms(wav) > 500, `not silence (RMS ${Math.round(rms(wav))})`)
  })

  await t.test('GetInput with the test engine: its known transcript', async (t) => {
    app.documents['/ext'] = `<Response><GetInput action="${app.base}/done" timeout="5" language="en-US" hints="agent"/></Response>`
    const form = await loopbackCall(real, app, '/done', (e, a) => {
      if (e.headers['Application'] === 'play_and_detect_speech') void real.tap.api(`uuid_broadcast ${a} tone_stream://%(1000,0,440) aleg`)
    })
    t.equal(form.get('InputType'), 'speech')
    t.equal(form.get('Speech'), 'agent', "mod_test's transcript")
    t.equal(form.get('Confidence'), '0.873')
    t.equal(form.get('Digits'), '')
  })

  await t.test('GetInput with keys: the digits, as GetDigits collects them', async (t) => {
    app.documents['/ext'] = `<Response><GetInput action="${app.base}/done" numDigits="4" timeout="5"/></Response>`
    const form = await loopbackCall(real, app, '/done', (e, a) => {
      if (e.headers['Application'] === 'play_and_detect_speech') void real.tap.api(`uuid_send_dtmf ${a} 4`)
      if (e.headers['Application'] === 'play_and_get_digits') void real.tap.api(`uuid_send_dtmf ${a} 2#`)
    })
    t.equal(form.get('InputType'), 'dtmf')
    t.equal(form.get('Digits'), '42')
    t.equal(form.get('Speech'), '')
  })
}
