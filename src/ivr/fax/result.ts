/**
 * A fax's outcome as FreeSWITCH reports it, and the parameters the document's URL is told
 * (docs/ivr.md "SendFax", "ReceiveFax": FaxOperation, FaxFilePath, FaxResultCode,
 * FaxResultText, FaxPages).
 *
 * mod_spandsp_fax.c phase_e_handler sets the channel variables `fax_success` (1/0),
 * `fax_result_code` (spandsp's T30_ERR_*: 0 is OK), `fax_result_text` and
 * `fax_document_transferred_pages` when the T.30 session ends, and they arrive on the
 * application's CHANNEL_EXECUTE_COMPLETE (test/fixtures/freeswitch/esl/45-txfax-rxfax-loopback.txt:
 * `1`, `0`, `OK`, `3` on both sides; 46-txfax-missing-file.txt: the receiver that heard nothing
 * gets `0`, `3`, `Timed out waiting for the first message`, `0`). A txfax whose file does not
 * exist sets none of them: its Application-Response says `Cannot send non-existant fax file`
 * (mod_spandsp_fax.c spanfax_init, 46).
 */
import type { FsEvent } from '../../pbx/types.js'

export type FaxOperation = 'transmission' | 'reception'

interface FaxResult {
  readonly operation: FaxOperation
  /** The file as the document named it (relative to the domain's fax folder; received_faxes/ included). */
  readonly filePath: string
  readonly success: boolean
  /** spandsp's result code: 0 is success; -1 when FreeSWITCH reported none. */
  readonly resultCode: number
  readonly resultText: string
  /** Pages sent or received. */
  readonly pages: number
}

/** The code when FreeSWITCH set no fax variable (the application never started a fax session). */
const NO_RESULT_CODE = -1

const int = (s: string | undefined, dflt: number): number => (s !== undefined && /^-?\d{1,9}$/.test(s) ? Number(s) : dflt)

/** The fax's result from the application's CHANNEL_EXECUTE_COMPLETE. */
export function readFaxResult(e: FsEvent, operation: FaxOperation, filePath: string): FaxResult {
  const code = int(e.variable_fax_result_code, NO_RESULT_CODE)
  const response = e['Application-Response'] ?? ''
  const text = e.variable_fax_result_text ?? (response !== '' && response !== '_none_' ? response : 'no fax result from FreeSWITCH')
  return {
    operation,
    filePath,
    success: e.variable_fax_success === '1' && code === 0,
    resultCode: code,
    resultText: text,
    pages: int(e.variable_fax_document_transferred_pages, 0),
  }
}

/** The parameters posted to the document's URL after a fax. */
export const faxParams = (r: FaxResult): Record<string, string> => ({
  FaxOperation: r.operation,
  FaxFilePath: r.filePath,
  FaxResultCode: String(r.resultCode),
  FaxResultText: r.resultText,
  FaxPages: String(r.pages),
})
