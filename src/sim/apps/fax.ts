/**
 * `txfax <file>` and `rxfax <file>` (mod_spandsp_fax.c spanfax_tx_function / spanfax_rx_function,
 * process_fax), as FreeSWITCH 1.10.12 runs them on the captures
 * test/fixtures/freeswitch/esl/45-txfax-rxfax-loopback.txt (a 3-page fax sent by one leg of a
 * loopback call and received by the other), 46-txfax-missing-file.txt and
 * 47-txfax-no-fax-machine.txt:
 *
 * - Both answer the channel first (45: CHANNEL_ANSWER right after rxfax's CHANNEL_EXECUTE).
 * - txfax of a file that does not exist ends at once with `Application-Response: Cannot send
 *   non-existant fax file` and no fax variable (46).
 * - Otherwise the T.30 session runs, and when it ends the channel variables fax_success,
 *   fax_result_code, fax_result_text, fax_document_transferred_pages (and the others below) are
 *   set before the application's CHANNEL_EXECUTE_COMPLETE (`Application-Response: _none_`).
 *   A 3-page fax took 24 s (45); a receiver that hears no fax gives up after 39 s with code 3,
 *   "Timed out waiting for the first message", 0 pages (46); a sender facing no fax machine
 *   gives up after 60 s with code 2, "Timed out waiting for initial communication", 0 pages (47).
 *
 * The simulator has no audio: the far end is a fax machine when its sim behaviour has
 * `fax_pages` (it receives whatever txfax sends, and sends that many pages to rxfax, written as
 * a blank fax TIFF, tiff.ts). Times are simulated (scaled). Not modelled: the CUSTOM
 * spandsp::* events, T.38, a file that is not a TIFF (sent as one page), a hangup mid-fax (the
 * application just ends).
 */
import { readFile, writeFile } from 'node:fs/promises'
import type { Switch } from '../core/switch.js'
import type { Session } from '../model/session.js'
import { wait } from './media.js'
import { blankFaxTiff, countTiffPages } from './tiff.js'

/** Training before the first page, and each page, at 14400 bit/s with ECM (45: 3 pages in 24 s). */
const SETUP_SEC = 10
const PAGE_SEC = 4.5
/** T.30 timers as 46 and 47 saw them end: the answering side gives up after 39 s (T1), the calling side after 60 s (T0). */
const RX_GIVE_UP_SEC = 39
const TX_GIVE_UP_SEC = 60

const NO_SUCH_FILE = 'Cannot send non-existant fax file'
const STATION_ID = 'SpanDSP Fax Ident'

interface Outcome {
  readonly code: number
  readonly text: string
  readonly pages: number
}

const TIMED_OUT_RX: Outcome = { code: 3, text: 'Timed out waiting for the first message', pages: 0 }
const TIMED_OUT_TX: Outcome = { code: 2, text: 'Timed out waiting for initial communication', pages: 0 }

/** The variables phase_e_handler sets, in the order of 45. */
function setResult(s: Session, file: string, o: Outcome): void {
  const ok = o.code === 0
  s.setVar('fax_v17_disabled', '0')
  s.setVar('fax_ecm_requested', '1')
  s.setVar('fax_filename', file)
  s.setVar('fax_success', ok ? '1' : '0')
  s.setVar('fax_result_code', String(o.code))
  s.setVar('fax_result_text', o.text)
  s.setVar('fax_ecm_used', ok ? 'on' : 'off')
  s.setVar('fax_t38_status', 'off')
  s.setVar('fax_local_station_id', STATION_ID)
  if (ok) s.setVar('fax_remote_station_id', STATION_ID)
  s.setVar('fax_document_transferred_pages', String(o.pages))
  s.setVar('fax_document_total_pages', String(o.pages))
  s.setVar('fax_transfer_rate', '14400')
}

export async function txfax(sw: Switch, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  const file = arg.trim()
  const bytes = await readFile(file).catch(() => undefined)
  if (bytes === undefined) {
    s.setVar('current_application_response', NO_SUCH_FILE)
    return
  }
  sw.answer(s)
  if (s.farEnd?.faxPages === undefined) {
    if (await wait(sw, TX_GIVE_UP_SEC, signal)) setResult(s, file, TIMED_OUT_TX)
    return
  }
  const pages = countTiffPages(bytes) ?? 1
  if (await wait(sw, SETUP_SEC + pages * PAGE_SEC, signal)) setResult(s, file, { code: 0, text: 'OK', pages })
}

export async function rxfax(sw: Switch, s: Session, arg: string, signal: AbortSignal): Promise<void> {
  const file = arg.trim()
  sw.answer(s)
  const pages = s.farEnd?.faxPages
  if (pages === undefined || pages === 0) {
    if (await wait(sw, RX_GIVE_UP_SEC, signal)) setResult(s, file, TIMED_OUT_RX)
    return
  }
  if (!(await wait(sw, SETUP_SEC + pages * PAGE_SEC, signal))) return
  await writeFile(file, blankFaxTiff(pages)).catch(() => undefined)
  setResult(s, file, { code: 0, text: 'OK', pages })
}
