/**
 * A request's time_limit and send_digits (api/schema/call-guards.ts) against its domain: the
 * time limit the call gets is the request's, else the domain's max_call_seconds, and a request
 * may not ask for more than that max (refused, naming it: a client asking for an hour where the
 * operator allows ten minutes should learn it at once, not by a call cut early).
 */
import type { DomainDirectory } from '../directory/directory.js'
import type { OriginationPlan } from '../origination/plan.js'
import { apiError, type ApiError } from './errors.js'
import { err, ok, type Result } from '../util/result.js'

export interface CallGuardsBody {
  readonly time_limit?: number | undefined
  readonly send_digits?: string | undefined
}

/** The plan's guard fields; absent ones stay absent. */
export function plannedGuards(body: CallGuardsBody, domain: DomainDirectory): Result<Pick<OriginationPlan, 'timeLimitSec' | 'sendDigits'>, ApiError> {
  const max = domain.config.max_call_seconds
  if (body.time_limit !== undefined && max !== undefined && body.time_limit > max) {
    return err(apiError('invalid_parameter', `time_limit: must be at most ${max} seconds, the domain's max_call_seconds`))
  }
  const timeLimitSec = body.time_limit ?? max
  return ok({
    ...(timeLimitSec !== undefined ? { timeLimitSec } : {}),
    ...(body.send_digits !== undefined ? { sendDigits: body.send_digits } : {}),
  })
}
