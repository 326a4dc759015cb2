/**
 * The status events of a request (issue 29 item 1): the plan's `status` from the request's
 * status_callback_url and status_events (api/schema/status.ts), all events by default.
 */
import { STATUS_EVENTS, type OriginationPlan, type StatusEventName } from '../origination/plan.js'
import { ok, type Result } from '../util/result.js'
import type { ApiError } from './errors.js'

export interface StatusAsk {
  readonly status_callback_url?: string | undefined
  readonly status_events?: readonly StatusEventName[] | undefined
}

/**
 * The plan's `status` (undefined: no status events). status_events without a status_callback_url
 * says nothing to anyone and is ignored, as other services ignore an event list without its URL:
 * a rule the request schemas could not state is not worth a refusal.
 */
export function plannedStatus(ask: StatusAsk): Result<OriginationPlan['status'], ApiError> {
  if (ask.status_callback_url === undefined) return ok(undefined)
  return ok({ url: ask.status_callback_url, events: ask.status_events ?? [...STATUS_EVENTS] })
}
