/**
 * The elements of the IVR language: THE list. Each module owns its element's type, the
 * attributes and children it accepts, how it is read from the document and how it runs; the
 * document parser reads statements through this table and the session runs them through it
 * (jambonz feature-server lib/tasks/make_task.js does the same from verb to task class).
 *
 * Adding an element: write `elements/<name>.ts` (its interface added to IvrElementTypes, and an
 * ElementModule with name, attributes, parse and run), then add it to ELEMENTS below. The mapped
 * type makes the table total: an element type without its module here does not compile.
 * The order is the order of messages that list elements (e.g. "only allowed inside <If> or <Cond>").
 */
import type { IvrElement, IvrElementTypes } from '../syntax/types.js'
import { answer } from './answer.js'
import { cond } from './cond.js'
import { getDigits } from './get-digits.js'
import { getInput } from './get-input.js'
import { getJson } from './get-json.js'
import { goTo } from './goto.js'
import { hangup } from './hangup.js'
import { ifElement } from './if.js'
import { park } from './park.js'
import { play } from './play.js'
import { receiveFax } from './receive-fax.js'
import { record } from './record.js'
import { redirect } from './redirect.js'
import { sendFax } from './send-fax.js'
import { set } from './set.js'
import { setErrorHandler } from './set-error-handler.js'
import { speak } from './speak.js'
import { switchElement } from './switch.js'
import { transfer } from './transfer.js'
import type { ElementContext, ElementModule, Outcome } from './types.js'
import { wait } from './wait.js'

export type ElementTable = { readonly [K in keyof IvrElementTypes]: ElementModule<IvrElementTypes[K]> }

export const ELEMENTS: ElementTable = {
  Answer: answer,
  Play: play,
  Speak: speak,
  Wait: wait,
  GetDigits: getDigits,
  GetInput: getInput,
  Record: record,
  SendFax: sendFax,
  ReceiveFax: receiveFax,
  Set: set,
  If: ifElement,
  Switch: switchElement,
  Cond: cond,
  GoTo: goTo,
  SetErrorHandler: setErrorHandler,
  GetJSON: getJson,
  Redirect: redirect,
  Transfer: transfer,
  Park: park,
  Hangup: hangup,
}

/** The module of an element (the table's value under its name). */
function moduleOf(el: IvrElement, table: ElementTable = ELEMENTS): ElementModule<IvrElement> {
  // TypeScript cannot correlate `table[el.type]` with `el` (a union on both sides); the mapped
  // type above guarantees that the module under a name takes the element of that name.
  return table[el.type] as unknown as ElementModule<IvrElement>
}

/** Runs one element with its module. */
export function runElement(el: IvrElement, ctx: ElementContext, table: ElementTable = ELEMENTS): Promise<Outcome> {
  return moduleOf(el, table).run(el, ctx)
}

export type { ElementContext, ElementModule, LoadedDocument, Outcome, PromptModule } from './types.js'
export type { Answer } from './answer.js'
export type { Cond, CondClause } from './cond.js'
export type { GetDigits, Prompt } from './get-digits.js'
export type { GetInput } from './get-input.js'
export type { GetJSON } from './get-json.js'
export type { RecordElement } from './record.js'
export type { GoTo } from './goto.js'
export type { Hangup, HangupReason } from './hangup.js'
export type { If } from './if.js'
export type { Park } from './park.js'
export type { Play } from './play.js'
export type { ReceiveFax } from './receive-fax.js'
export type { Redirect } from './redirect.js'
export type { SendFax } from './send-fax.js'
export type { SetVar } from './set.js'
export type { SetErrorHandler } from './set-error-handler.js'
export type { Speak } from './speak.js'
export type { Switch, SwitchCase } from './switch.js'
export type { FailureAction, Transfer, TransferFailureReason } from './transfer.js'
/** @internal Exported for tests: test/ivr/runner checks the cause mapping. */
export { failureReason } from './transfer.js'
export type { Wait } from './wait.js'
/** @internal Exported for tests: test/ivr/runner checks what the media elements hand FreeSWITCH. */
export { fliteVoice, speakText, promptText, fetchableUrl, audioFile } from './media.js'
