/**
 * Issue 30 item 5: the simulator's `txfax` and `rxfax` (src/sim/apps/fax.ts) against the real
 * FreeSWITCH 1.10.12 captures test/fixtures/freeswitch/esl/45-47: the fax variables and the
 * Application-Response of each application's CHANNEL_EXECUTE_COMPLETE are FreeSWITCH's, for a
 * fax that went through, a missing file and a far end that is no fax machine; a far end that
 * sends a fax leaves a TIFF of its pages.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { blankFaxTiff, countTiffPages } from '../../src/sim/apps/tiff.js'
import { capturedEvents, type CapturedEvent } from '../sim/captured-events.js'
import { startSim, type Ev } from '../sim/helpers.js'

const EVENTS = 'CHANNEL_CREATE CHANNEL_ANSWER CHANNEL_PARK CHANNEL_EXECUTE CHANNEL_EXECUTE_COMPLETE CHANNEL_HANGUP BACKGROUND_JOB'
/** The variables a fax's outcome is read from (src/ivr/fax/result.ts). */
const RESULT_VARS = ['variable_fax_success', 'variable_fax_result_code', 'variable_fax_result_text', 'variable_fax_document_transferred_pages']

const completeOf = (events: ReadonlyArray<CapturedEvent | Ev>, app: string): CapturedEvent | Ev | undefined =>
  events.find((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE' && e['Application'] === app)

/** What FreeSWITCH reports of a fax: the Application-Response and the result variables. */
const outcome = (e: CapturedEvent | Ev | undefined): Record<string, unknown> =>
  Object.fromEntries(['Application-Response', ...RESULT_VARS].map((k) => [k, e?.[k]]))

async function faxCall(t: Parameters<typeof startSim>[0], number: string, app: 'txfax' | 'rxfax', file: string): Promise<Ev | undefined> {
  const { sim, connect } = await startSim(t)
  sim.setPstnBehaviour('example.test', '0399990001', { answer_after: 0, fax_pages: 2 })
  sim.setPstnBehaviour('example.test', '0399990002', { answer_after: 0 })
  const c = await connect()
  await c.login('ClueCon', EVENTS)
  const a = crypto.randomUUID()
  await c.command(`bgapi originate {origination_uuid=${a}}sofia/gateway/pstn/${number} &park()`)
  await c.waitFor((e) => e['Event-Name'] === 'CHANNEL_PARK' && e['Unique-ID'] === a)
  await c.command(`sendmsg ${a}\ncall-command: execute\nexecute-app-name: ${app}\nexecute-app-arg: ${file}`)
  return c.waitFor((e) => e['Event-Name'] === 'CHANNEL_EXECUTE_COMPLETE' && e['Application'] === app && e['Unique-ID'] === a, 10_000)
}

t.test('txfax to a fax machine: the results FreeSWITCH gave for a 3-page fax (esl/45)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-sim-fax-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'out.tif')
  writeFileSync(file, blankFaxTiff(3))
  const captured = outcome(completeOf(capturedEvents('45-txfax-rxfax-loopback.txt'), 'txfax'))
  t.same(captured, { 'Application-Response': '_none_', variable_fax_success: '1', variable_fax_result_code: '0', variable_fax_result_text: 'OK', variable_fax_document_transferred_pages: '3' }, 'the real switch')
  t.same(outcome(await faxCall(t, '0399990001', 'txfax', file)), captured, 'the simulator')
})

t.test('txfax of a missing file: FreeSWITCH\'s response and no fax variable (esl/46)', async (t) => {
  const captured = outcome(completeOf(capturedEvents('46-txfax-missing-file.txt'), 'txfax'))
  t.equal(captured['Application-Response'], 'Cannot send non-existant fax file')
  t.same(outcome(await faxCall(t, '0399990001', 'txfax', '/nonexistent/cod-fax/missing.tif')), captured)
})

t.test('txfax to a far end that is no fax machine: code 2 after FreeSWITCH\'s timer (esl/47)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-sim-fax-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'out.tif')
  writeFileSync(file, blankFaxTiff(1))
  const captured = outcome(completeOf(capturedEvents('47-txfax-no-fax-machine.txt'), 'txfax'))
  t.equal(captured.variable_fax_result_code, '2')
  t.same(outcome(await faxCall(t, '0399990002', 'txfax', file)), captured)
})

t.test('rxfax with nothing sent: code 3 as the receiver of esl/46; from a fax machine: its pages in a TIFF', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-sim-fax-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const captured = outcome(completeOf(capturedEvents('46-txfax-missing-file.txt'), 'rxfax'))
  t.equal(captured.variable_fax_result_code, '3')
  t.same(outcome(await faxCall(t, '0399990002', 'rxfax', join(dir, 'none.tif'))), captured)
  const received = await faxCall(t, '0399990001', 'rxfax', join(dir, 'in.tif'))
  t.match(outcome(received), { variable_fax_success: '1', variable_fax_result_code: '0', variable_fax_document_transferred_pages: '2' })
  t.equal(countTiffPages(readFileSync(join(dir, 'in.tif'))), 2)
})
