/**
 * `<ReceiveFax>orders/today.tif</ReceiveFax>`: receives a fax with mod_spandsp's `rxfax` into
 * `received_faxes/<name>` of the domain's fax folder (`ivr.fax_dir/<domain>/`), its folders made
 * as needed. The name follows fax/fax-name.ts's rule (the same hostile forms as Play's media are
 * refused). Received files are kept `ivr.fax_retention_days` (fax/retention.ts). The fax's result
 * becomes the call parameters FaxOperation (`reception`), FaxFilePath, FaxResultCode,
 * FaxResultText, FaxPages (elements/fax.ts).
 */
import type { ElementBase, Param, ValueCheck } from '../syntax/types.js'
import { FAX_NAME_RULE, readFaxName } from '../fax/fax-name.js'
import { runFax } from './fax.js'
import type { ElementModule } from './types.js'

export interface ReceiveFax extends ElementBase {
  readonly type: 'ReceiveFax'
  /** The file to write, relative to the domain's received_faxes/ folder. */
  readonly file: Param<string>
}

declare module '../syntax/types.js' {
  interface IvrElementTypes {
    ReceiveFax: ReceiveFax
  }
}

const FAX_FILE: ValueCheck<string> = { rule: FAX_NAME_RULE, convert: readFaxName }

export const receiveFax: ElementModule<ReceiveFax> = {
  name: 'ReceiveFax',
  attributes: [],
  parse(node, ctx) {
    return { type: 'ReceiveFax', pos: node.pos, file: ctx.textValue(node, 'the TIFF file to write under received_faxes/', FAX_FILE) }
  },
  async run(el, ctx) {
    const file = ctx.value(el.file)
    if (!file.ok) return file.error
    return runFax({ operation: 'reception', element: 'ReceiveFax', name: file.value }, ctx)
  },
}
