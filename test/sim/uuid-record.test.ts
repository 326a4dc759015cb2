/**
 * `uuid_record <uuid> start|stop <path>` in the simulator against the real FreeSWITCH 1.10.12
 * capture test/fixtures/freeswitch/esl/48-uuid-record.txt: RECORD_START before the job's
 * `+OK Success`, RECORD_STOP (`success-maxtime`, the recorded time) before the stop's, the
 * capture's headers on both, a stereo WAV of that length, and the capture's refusals (a second
 * stop, an unknown uuid).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { capturedEvents, type CapturedEvent } from './captured-events.js'
import { startSim, type Ev, type RawEsl } from './helpers.js'
import { act, dialplan, NOT_FOUND, section, xmlServer } from './xml-server.js'

const A = 'aaaaaaaa-4848-4848-8848-0000000000a1'
const GONE = 'aaaaaaaa-4848-4848-8848-0000000000ff'
const EVENTS = 'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_BRIDGE CHANNEL_HANGUP CHANNEL_HANGUP_COMPLETE CHANNEL_DESTROY RECORD_START RECORD_STOP BACKGROUND_JOB'

/**
 * The header names of an event that do not depend on the call: not variables or caller profiles,
 * nor Channel-Presence-ID (the capture's legs are loopback ones, with no presence; a user's leg has one).
 */
const ownHeaders = (e: Record<string, unknown>): string[] => Object.keys(e).filter((k) => !/^(variable_|Caller-|Other-Leg-|Channel-Presence-ID$)/.test(k)).sort()
const named = (events: readonly Record<string, unknown>[], name: string) => events.filter((e) => e['Event-Name'] === name)

/** The BACKGROUND_JOB body of the bgapi `command` (its Job-UUID from the reply). */
async function job(c: RawEsl, command: string): Promise<string> {
  const reply = await c.command(`bgapi ${command}`)
  const id = /Job-UUID: (\S+)/.exec(String(reply.headers['Reply-Text'] ?? ''))?.[1]
  const done = await c.waitFor((e) => e['Event-Name'] === 'BACKGROUND_JOB' && e['Job-UUID'] === id)
  return String(done['_body'] ?? '')
}

/** The position in `events` of the first event `pred` matches. */
const at = (events: readonly Ev[], pred: (e: Ev) => boolean): number => events.findIndex(pred)

t.test('uuid_record start / stop on a bridged leg, as esl/48', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cod-sim-uuid-record-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const srv = await xmlServer(t, (r) => (section(r) === 'dialplan' ? { body: dialplan('example.test', act('set', 'hangup_after_bridge=true') + act('bridge', 'user/bob@example.test')) } : { body: NOT_FOUND }))
  const { sim, connect } = await startSim(t, { xmlCurl: { url: srv.url, username: 'freeswitch', password: 'xml-secret' } })
  sim.setTerminalBehaviour('example.test', 'alice', 1, { behaviour: 'unregistered' })
  const c = await connect()
  await c.login('ClueCon', EVENTS)
  await c.command(`bgapi originate {origination_uuid=${A},originate_timeout=20}user/alice@example.test cod_route XML example.test`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_BRIDGE')
  const path = join(dir, 'example.test', 'r1.wav')

  t.equal(await job(c, `uuid_setvar ${A} RECORD_STEREO true`), '+OK\n')
  t.equal(await job(c, `uuid_record ${A} start ${path}`), '+OK Success\n')
  await new Promise((r) => setTimeout(r, 400))
  t.equal(await job(c, `uuid_record ${A} stop ${path}`), '+OK Success\n')
  t.equal(await job(c, `uuid_record ${A} stop ${path}`), '-ERR Cannot stop record session!\n', 'nothing records that path any more')
  t.equal(await job(c, `uuid_record ${GONE} stop ${path}`), '-ERR Cannot locate session!\n')
  t.equal(await job(c, `uuid_record ${GONE} start ${path}`), '-ERR Cannot locate session!\n')

  const events = c.events()
  const captured = capturedEvents('48-uuid-record.txt')
  const start = named(events, 'RECORD_START')[0] as Ev
  const stop = named(events, 'RECORD_STOP')[0] as Ev
  t.same(ownHeaders(start), ownHeaders(named(captured, 'RECORD_START')[0] as CapturedEvent), "RECORD_START: the capture's headers")
  t.same(ownHeaders(stop), ownHeaders(named(captured, 'RECORD_STOP')[0] as CapturedEvent), "RECORD_STOP: the capture's headers")
  t.equal(stop['Record-Completion-Cause'], 'success-maxtime')
  t.equal(stop['variable_record_completion_cause'], 'success-maxtime')
  t.equal(stop['Answer-State'], 'answered', 'the leg is still up')
  // The events come before their job's reply (esl/48).
  const jobOf = (text: string) => at(events, (e) => e['Event-Name'] === 'BACKGROUND_JOB' && String(e['Job-Command-Arg'] ?? '').includes(text))
  t.ok(at(events, (e) => e === start) < jobOf(`${A} start`), 'RECORD_START before the start is answered')
  t.ok(at(events, (e) => e === stop) < jobOf(`${A} stop`), 'RECORD_STOP before the stop is answered')

  const ms = Number(stop['variable_record_ms'])
  t.ok(ms >= 300 && ms <= 1500, `record_ms ${ms}: the time between start and stop`)
  const file = await readFile(path)
  t.equal(stop['variable_record_file_size'], String(file.length))
  t.equal(file.readUInt16LE(22), 2, 'stereo')
  t.equal(file.length, 44 + ms * 8 * 2 * 2, 'the recorded length')

  t.ok(sim.remoteHangup(A))
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_DESTROY' && e['Unique-ID'] === A)
  t.equal(named(c.events(), 'RECORD_STOP').length, 1, 'a stopped recording does not end again at the hangup')
})
