/**
 * The recording decision of a request (issue 28): the policy of src/recording/policy.ts asked
 * with the records the operation resolved, its refusal turned into the API's 403, and a yes
 * turned into what the plan carries: a fresh recording id (the daemon's, never the client's) and
 * where the finished recording's record goes (the request's recording_callback_url, else the
 * domain's recording.callback_url).
 */
import type { DomainDirectory, Group, User } from '../directory/directory.js'
import type { OriginationPlan } from '../origination/plan.js'
import { newRecordingId } from '../recording/id.js'
import { decideRecording } from '../recording/policy.js'
import { err, ok, type Result } from '../util/result.js'
import { apiError, type ApiError } from './errors.js'

export interface RecordingAsk {
  readonly record?: boolean | undefined
  readonly recording_callback_url?: string | undefined
}

export type PlannedRecording = NonNullable<OriginationPlan['recording']>

/** The plan's `recording` (undefined: not recorded), or recording_not_allowed. */
export function plannedRecording(ask: RecordingAsk, domain: DomainDirectory, parties: { readonly group?: Group | undefined; readonly user?: User | undefined }): Result<PlannedRecording | undefined, ApiError> {
  const decided = decideRecording({
    domain: { name: domain.name, recording: domain.config.recording },
    ...(parties.group !== undefined ? { group: parties.group } : {}),
    ...(parties.user !== undefined ? { user: parties.user } : {}),
    requested: ask.record,
  })
  if (!decided.ok) return err(apiError('recording_not_allowed', decided.error.description))
  if (!decided.value.record) return ok(undefined)
  const callbackUrl = ask.recording_callback_url ?? domain.config.recording.callback_url
  return ok({ id: newRecordingId(), retentionDays: decided.value.retentionDays, ...(callbackUrl !== undefined ? { callbackUrl } : {}) })
}
