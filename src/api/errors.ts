/**
 * The error catalogue of docs/design.md ("Error ids and statuses"): every error the API can answer,
 * with its HTTP status. The body is always `{result_code: 500, error: {id, description}}`.
 */
export const ERROR_STATUS = {
  unauthorized: 401,
  missing_parameter: 400,
  invalid_parameter: 400,
  ambiguous_user: 400,
  ambiguous_group: 400,
  invalid_xml: 400,
  destination_not_allowed: 400,
  privilege_required: 403,
  /** The recording policy refuses the request's `record` (src/recording/policy.ts). */
  recording_not_allowed: 403,
  /** No such path (not a parameter problem): the reply to a URL that names no endpoint. */
  not_found: 404,
  user_not_found: 404,
  group_not_found: 404,
  destination_not_found: 404,
  /** No recording of this domain has that id (another domain's answers the same). */
  recording_not_found: 404,
  /** No live channel of this domain has that UUID (another domain's answers the same: api/calls/). */
  channel_not_found: 404,
  /** The path exists but not with this HTTP method (the reply carries an `Allow` header). */
  method_not_allowed: 405,
  user_not_registered: 409,
  no_member_available: 409,
  /** The Idempotency-Key was used within 24 h for another request (api/idempotency.ts). */
  idempotency_key_reused: 409,
  /** POST .../calls/{uuid}/record: start on a leg being recorded (the description names its recording), stop on one that is not (api/calls/). */
  recording_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** A Range of a recording's audio that starts beyond its end (the reply carries `Content-Range: bytes *\/size`). */
  range_not_satisfiable: 416,
  channel_limit_reached: 429,
  /** The client address failed authentication too often (api/throttle.ts); the reply carries `Retry-After`. */
  too_many_requests: 429,
  internal_error: 500,
  /** FreeSWITCH refused a command on a live channel (api/calls/): its answer is in the description. */
  command_failed: 502,
  pbx_unavailable: 503,
  /** A node of a cluster cannot reach Redis, so it cannot check the shared channel limit (docs/cluster.md). */
  cluster_unavailable: 503,
} as const

export type ApiErrorId = keyof typeof ERROR_STATUS

export interface ApiError {
  readonly id: ApiErrorId
  /** Names the parameter and the rule broken, for the developer reading the reply. */
  readonly description: string
}

export const apiError = (id: ApiErrorId, description: string): ApiError => ({ id, description })

export const statusOf = (e: ApiError): number => ERROR_STATUS[e.id]

export const errorBody = (e: ApiError) => ({
  result_code: 500 as const,
  error: { id: e.id, description: e.description },
})
