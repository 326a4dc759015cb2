/**
 * A recording's record as clients see it (snake_case, like every reply of the API): the body of
 * GET {prefix}/recordings/{id} (src/api/recordings/) and of a recording notice (follow.ts), one
 * shape for both.
 */
import type { RecordingRecord } from './types.js'

/** The record of one recording as the API shows it. */
export interface RecordingView {
  readonly id: string
  readonly request_id: string
  readonly domain: string
  readonly legs: readonly string[]
  readonly started_at: string
  readonly duration_ms: number | null
  readonly bytes: number
  readonly format: 'wav'
  readonly status: RecordingRecord['status']
  readonly reason?: string
}

export const viewOf = (r: RecordingRecord): RecordingView => ({
  id: r.id,
  request_id: r.requestId,
  domain: r.domain,
  legs: r.legs,
  started_at: r.startedAt,
  duration_ms: r.durationMs ?? null,
  bytes: r.bytes,
  format: r.format,
  status: r.status,
  ...(r.reason !== undefined ? { reason: r.reason } : {}),
})
