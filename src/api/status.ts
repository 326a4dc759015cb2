/**
 * The status events of a request (issue 29 item 1): the plan's `status` from the request's
 * status_callback_url and status_events (api/schema/status.ts), all events by default.
 */
import { STATUS_EVENTS, type OriginationPlan, type StatusEventName } from '../origination/plan.js'
import { err, ok, type Result } from '../util/result.js'
import { apiError, type ApiError } from './errors.js'

export interface StatusAsk {
  readonly status_callback_url?: string | undefined
  readonly status_events?: readonly StatusEventName[] | undefined
}

/** The plan's `status` (undefined: no status events), or invalid_parameter for events without a URL. */
export function plannedStatus(ask: StatusAsk): Result<OriginationPlan['status'], ApiError> {
  if (ask.status_callback_url === undefined) {
    return ask.status_events === undefined ? ok(undefined) : err(apiError('invalid_parameter', 'status_events: is given without status_callback_url'))
  }
  return ok({ url: ask.status_callback_url, events: ask.status_events ?? [...STATUS_EVENTS] })
}
