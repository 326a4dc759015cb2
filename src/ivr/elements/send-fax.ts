/**
 * `<SendFax header="...">invoices/2025-001.tif</SendFax>`: sends a TIFF of the domain's fax
 * folder (`ivr.fax_dir/<domain>/`) as a fax with mod_spandsp's `txfax`, `header` printed atop
 * every page (the channel variable `fax_header`). What the text may name is fax/fax-name.ts's
 * rule (the same hostile forms as Play's media are refused); a file that is not there is a
 * runtime error naming it. The fax's result becomes the call parameters FaxOperation
 * (`transmission`), FaxFilePath, FaxResultCode, FaxResultText, FaxPages (elements/fax.ts).
 */
import { err, ok } from '../../util/result.js'
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import { FAX_NAME_RULE, readFaxName } from '../fax/fax-name.js'
import { runFax } from './fax.js'
import type { ElementModule } from './types.js'

export interface SendFax extends ElementBase {
  readonly type: 'SendFax'
  /** The page header ('' for none). */
  readonly header: Param<string>
  /** The TIFF, relative to the domain's fax folder. */
  readonly file: Param<string>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    SendFax: SendFax
  }
}

/** spandsp's page header info holds 20 characters at most (T.30 header line); `$` and `\` FreeSWITCH would expand. */
const MAX_HEADER = 20
const HEADER_RULE = `up to ${MAX_HEADER} printable ASCII characters (no $ or \\)`
const HEADER: ValueCheck<string> = {
  rule: HEADER_RULE,
  convert: (raw) => (raw.length <= MAX_HEADER && /^[\x20-\x7e]*$/.test(raw) && !/[$\\]/.test(raw) ? ok(raw) : err(`must be ${HEADER_RULE}`)),
}

const FAX_FILE: ValueCheck<string> = { rule: FAX_NAME_RULE, convert: readFaxName }

export const sendFax: ElementModule<SendFax> = {
  name: 'SendFax',
  attributes: ['header'],
  parse(node, ctx) {
    return {
      type: 'SendFax',
      pos: node.pos,
      header: ctx.attr(node, 'header', HEADER, ''),
      file: ctx.textValue(node, 'the TIFF file to send', FAX_FILE),
    }
  },
  async run(el, ctx) {
    const file = ctx.value(el.file)
    if (!file.ok) return file.error
    const header = ctx.value(el.header)
    if (!header.ok) return header.error
    return runFax({ operation: 'transmission', element: 'SendFax', name: file.value, header: header.value }, ctx)
  },
}
