/**
 * The default CtiCommands: every ESL text comes from pbx/commands.ts.
 *
 * Park with a timeout: FreeSWITCH's park loop reads the channel variable `park_timeout`
 * (`<seconds>[:<cause>]`) when the park starts and hangs the channel up with that cause
 * (NORMAL_CLEARING by default) when it expires, then clears the variable
 * (src/switch_ivr.c switch_ivr_park). `uuid_park` (mod_commands.c park_function) calls
 * switch_ivr_park_session, which moves the channel to CS_PARK, whose standard handler runs
 * switch_ivr_park (src/switch_core_state_machine.c switch_core_standard_on_park). So
 * `uuid_setvar <uuid> park_timeout <n>` followed by `uuid_park <uuid>` parks for n seconds.
 */
import { CHANNEL_VARS } from '../pbx/channel-vars.js'
import { uuidKill, uuidPark, uuidSetVar, uuidTransfer, type CommandError } from '../pbx/commands.js'
import type { EslCommand } from '../pbx/types.js'
import { err, ok, type Result } from '../util/result.js'
import type { CommandProblem, CtiCommands } from './control.js'

const problem = <T>(r: Result<T, CommandError>): Result<T, CommandProblem> =>
  r.ok ? r : err({ description: `${r.error.field}: ${r.error.reason}` })

export const eslCommands: CtiCommands = {
  // Marked first: the leg's hangup events then carry cod_hangup_by=api (a status event's hangup_by).
  hangup: (uuid, cause): Result<readonly EslCommand[], CommandProblem> => {
    const mark = problem(uuidSetVar(uuid, CHANNEL_VARS.hangupBy, 'api'))
    if (!mark.ok) return mark
    const kill = problem(uuidKill(uuid, cause))
    return kill.ok ? ok([mark.value, kill.value]) : kill
  },
  transfer: (uuid, extension, context) => problem(uuidTransfer(uuid, extension, context)),
  park: (uuid, timeoutSec): Result<readonly EslCommand[], CommandProblem> => {
    const park = problem(uuidPark(uuid))
    if (!park.ok) return park
    if (timeoutSec === undefined) return ok([park.value])
    const setTimeout = problem(uuidSetVar(uuid, 'park_timeout', String(timeoutSec)))
    if (!setTimeout.ok) return setTimeout
    return ok([setTimeout.value, park.value])
  },
}
