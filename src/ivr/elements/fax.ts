/**
 * What SendFax and ReceiveFax share once their values are read: the file's confined path, the
 * answer, mod_spandsp's application, and its result made call parameters (FaxOperation,
 * FaxFilePath, FaxResultCode, FaxResultText, FaxPages: the document's next fetches and its URL
 * at the call's end see them, fax/result.ts).
 *
 * A fax that ran and failed (no fax machine at the far end, a broken transfer) is not a runtime
 * error: the document reads FaxResultCode. A file that is missing, or a path that cannot be
 * used, is one (`SetErrorHandler` applies; without it the call ends with `Error`).
 */
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { app } from '../../pbx/commands.js'
import { err, ok, type Result } from '../../util/result.js'
import { EXEC_TIMEOUT_MS, NEXT, runtimeError, type ElementContext, type Outcome } from './types.js'
import { faxPath, RECEIVED_FOLDER } from '../fax/fax-name.js'
import { faxParams, readFaxResult, type FaxOperation } from '../fax/result.js'

/** mod_spandsp_fax.c spanfax_init's Application-Response for a txfax file that does not exist (esl/46). */
const NO_SUCH_FILE = 'Cannot send non-existant fax file'

export interface FaxJob {
  readonly operation: FaxOperation
  /** The element, for messages. */
  readonly element: 'SendFax' | 'ReceiveFax'
  /** The name as the document wrote it (checked by readFaxName). */
  readonly name: string
  /** SendFax: the header on every page ('' for none). */
  readonly header?: string
}

const isFile = async (path: string): Promise<boolean> => (await stat(path).catch(() => undefined))?.isFile() === true

/** The file FreeSWITCH opens: checked, confined, and for a reception its folders made. */
async function prepare(job: FaxJob, ctx: ElementContext): Promise<Result<string, Outcome>> {
  const fail = (why: string) => err(runtimeError(`${job.element}: ${why}`))
  if (ctx.faxDir === undefined) return fail('this daemon has no fax folder (ivr.fax_dir)')
  const receiving = job.operation === 'reception'
  const path = faxPath(ctx.faxDir, ctx.domain.name, job.name, receiving ? RECEIVED_FOLDER : undefined)
  if (!path.ok) return fail(path.error)
  if (!receiving) {
    if (!(await isFile(path.value))) return fail(`the file ${JSON.stringify(job.name)} is missing from the domain's fax folder`)
    return ok(path.value)
  }
  try {
    await mkdir(dirname(path.value), { recursive: true })
  } catch (e) {
    return fail(`the folder for ${JSON.stringify(`${RECEIVED_FOLDER}/${job.name}`)} cannot be made: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
  }
  // The folders just made are checked again: nothing may have put a link in the way meanwhile.
  const again = faxPath(ctx.faxDir, ctx.domain.name, job.name, RECEIVED_FOLDER)
  return again.ok ? ok(again.value) : fail(again.error)
}

export async function runFax(job: FaxJob, ctx: ElementContext): Promise<Outcome> {
  const path = await prepare(job, ctx)
  if (!path.ok) return path.error
  const answered = await ctx.answer()
  if (!answered.ok) return answered.error
  if (job.operation === 'transmission') {
    // txfax reads fax_header (mod_spandsp_fax.c spanfax_init: t30_set_tx_page_header_info);
    // unset when none, so that an earlier SendFax's header does not stay.
    const header = job.header ?? ''
    const set = await ctx.exec(header === '' ? app('unset', 'fax_header') : app('set', `fax_header=${header}`))
    if (!set.ok) return set.error
  }
  const done = await ctx.exec(app(job.operation === 'transmission' ? 'txfax' : 'rxfax', path.value), EXEC_TIMEOUT_MS.media)
  if (!done.ok) return done.error
  const filePath = job.operation === 'reception' ? `${RECEIVED_FOLDER}/${job.name}` : job.name
  if (done.value['Application-Response'] === NO_SUCH_FILE) {
    return runtimeError(`${job.element}: the file ${JSON.stringify(job.name)} is missing (FreeSWITCH: ${NO_SUCH_FILE})`)
  }
  const result = readFaxResult(done.value, job.operation, filePath)
  ctx.log.info({ operation: result.operation, file: filePath, code: result.resultCode, pages: result.pages }, 'ivr fax done')
  ctx.setResults(faxParams(result))
  return NEXT
}
