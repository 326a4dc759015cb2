/**
 * The table from element name to its module (jambonz feature-server lib/tasks/make_task.js does
 * the same from verb to task class). The mapped type makes the table total: an element added
 * to the document model without a module here does not compile.
 */
import type { IvrElement } from '../document/types.js'
import { answer } from './answer.js'
import { cond } from './cond.js'
import { getDigits } from './get-digits.js'
import { getJson } from './get-json.js'
import { goTo } from './goto.js'
import { hangup } from './hangup.js'
import { ifElement } from './if.js'
import { park } from './park.js'
import { play } from './play.js'
import { redirect } from './redirect.js'
import { set } from './set.js'
import { setErrorHandler } from './set-error-handler.js'
import { speak } from './speak.js'
import { switchElement } from './switch.js'
import { transfer } from './transfer.js'
import type { ElementContext, ElementModule, Outcome } from './types.js'
import { wait } from './wait.js'

export type ElementTable = { readonly [K in IvrElement['type']]: ElementModule<Extract<IvrElement, { type: K }>> }

export const ELEMENTS: ElementTable = {
  Answer: answer,
  Play: play,
  Speak: speak,
  Wait: wait,
  GetDigits: getDigits,
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

/** Runs one element with its module. */
export function runElement(el: IvrElement, ctx: ElementContext, table: ElementTable = ELEMENTS): Promise<Outcome> {
  // TypeScript cannot correlate `table[el.type]` with `el` (a union on both sides); the mapped
  // type above guarantees that the module under a name takes the element of that name.
  const module = table[el.type] as unknown as ElementModule<IvrElement>
  return module.run(el, ctx)
}

export type { ElementContext, ElementModule, LoadedDocument, Outcome } from './types.js'
export { EXEC_TIMEOUT_MS, GONE, NEXT, runtimeError } from './types.js'
export { DIGITS_VAR } from './get-digits.js'
export { HANGUP_CAUSES } from './hangup.js'
export { HOLD_MUSIC } from './park.js'
export { failureReason, type TransferFailureReason } from './transfer.js'
export { fliteVoice, FLITE_VOICES, speakText, promptText, fetchableUrl, audioFile, TTS_ENGINE } from './media.js'
