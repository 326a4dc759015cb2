/**
 * A request's wait_ms (api/schema/waiting.ts) against its domain's limits.max_wait_ms: more than
 * the operator allows is refused, naming the max (as time_limit against max_call_seconds).
 */
import type { DomainDirectory } from '../directory/directory.js'
import type { OriginationPlan } from '../origination/plan.js'
import { err, ok, type Result } from '../util/result.js'
import { apiError, type ApiError } from './errors.js'

export function plannedWait(body: { readonly wait_ms?: number | undefined }, domain: DomainDirectory): Result<Pick<OriginationPlan, 'waitMs'>, ApiError> {
  const max = domain.config.limits.max_wait_ms
  if (body.wait_ms !== undefined && body.wait_ms > max) return err(apiError('invalid_parameter', `wait_ms: must be at most ${max} ms, the domain's limits.max_wait_ms`))
  return ok(body.wait_ms !== undefined && body.wait_ms > 0 ? { waitMs: body.wait_ms } : {})
}
