/**
 * Issue 13 D2: the caller id a destination sees. When an answered originated leg is connected
 * to a user or a group, the legs the bridge creates take their caller id from the calling
 * channel's effective_caller_id_name/number (switch_ivr_originate.c, v1.10.12). Without them
 * FreeSWITCH presents the originated leg's own caller id, which it flipped at answer
 * (switch_channel_flip_cid): bob's phone showed "Outbound Call" instead of alice, and alice's
 * phone showed "Outbound Call" instead of the PSTN party's number.
 *
 * - a leg of one of our users (cod_user_id): the user's label (its name when the label has blanks
 *   or other characters application data may not hold) and extension (else its name);
 * - a PSTN leg (no cod_user_id): the number we dialed, as name and number.
 */
import { isPstnNumber } from '../config/schema.js'
import type { DomainDirectory } from '../directory/directory.js'
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import type { FetchForm } from './form.js'
import type { LegContext } from './leg.js'
import type { Action } from './routes.js'
import { safe } from './values.js'

/** values.ts safe()'s alphabet, not empty. */
const SAFE_TEXT = /^[A-Za-z0-9._@+*#%/=-]+$/

export interface CallerId {
  readonly name: string
  readonly number: string
}

/** The caller id an originated leg presents to its destination; undefined when nothing fits. */
export function originatorCallerId(form: FetchForm, domain: DomainDirectory, leg: LegContext): CallerId | undefined {
  if (leg.role !== 'originator') return undefined
  const userId = form.get(`variable_${CHANNEL_VARS.userId}`)
  if (userId !== undefined) {
    const user = domain.userById(userId)
    if (user === undefined) return undefined
    // A label with characters application data may not hold (blanks...) gives way to the name.
    const label = user.label !== undefined && SAFE_TEXT.test(user.label) ? user.label : user.name
    return { name: label, number: user.extension ?? user.name }
  }
  // Not Caller-Caller-ID-Number: a real 1.10.12 flips it only after the originate returned,
  // while the dialplan of the answered leg may already run (it then still holds the calling
  // number we presented: seen by test/realfs/). The channel's name ends with the dialed number
  // (sofia/<profile>/<number>, sofia_glue_set_name) from its creation on.
  const name = form.get('Channel-Name') ?? ''
  const number = name.slice(name.lastIndexOf('/') + 1)
  return name.startsWith('sofia/') && isPstnNumber(number) ? { name: number, number } : undefined
}

/**
 * The route's actions with the caller id set before the first bridge to a user or group
 * (`user/` dial strings); routes to the PSTN keep the calling number they set themselves.
 */
export function withCallerId(actions: readonly Action[], id: CallerId | undefined): Action[] {
  const at = actions.findIndex((a) => a.app === 'bridge' && /(^|\])user\//.test(a.data ?? ''))
  if (id === undefined || at < 0) return [...actions]
  return [
    ...actions.slice(0, at),
    { app: 'set', data: `effective_caller_id_name=${safe(id.name)}` },
    { app: 'set', data: `effective_caller_id_number=${safe(id.number)}` },
    ...actions.slice(at),
  ]
}
