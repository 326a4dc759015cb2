/**
 * The HTTP answer to an engine refusal: the engine says why it did not place a call in its own
 * terms (origination/refusal.ts); this is the one place that turns them into API error ids
 * (and so statuses, errors.ts).
 */
import type { OriginationRefusal, RefusalReason } from '../origination/refusal.js'
import { apiError, type ApiError, type ApiErrorId } from './errors.js'

const ERROR_ID: Readonly<Record<RefusalReason, ApiErrorId>> = {
  user_not_registered: 'user_not_registered',
  no_member_available: 'no_member_available',
  channel_limit_reached: 'channel_limit_reached',
  pbx_unavailable: 'pbx_unavailable',
  cluster_unavailable: 'cluster_unavailable',
  internal: 'internal_error',
}

export const apiErrorOfRefusal = (r: OriginationRefusal): ApiError => apiError(ERROR_ID[r.reason], r.description)
