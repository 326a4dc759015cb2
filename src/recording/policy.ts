/**
 * Whether a call is recorded (issue 28's table, docs/recording.md "Policy"): a pure function of
 * the configured policies and the request's `record`, so that every row of the table is a unit
 * test and the API only maps a refusal to its HTTP answer (403 recording_not_allowed).
 *
 * Which policy applies: the most specific one that is set. For a call made for a group (call_group's
 * group, call_user's group_* / group_resolver, initiate_call's group_name) the group's comes first,
 * as the interface says group settings apply to such a call; then the originating user's; then the
 * domain's, which is always set (default never). retention_days follows the same order, a group or
 * user without its own taking the domain's.
 *
 * | mode       | record absent | record: true | record: false |
 * |------------|---------------|--------------|---------------|
 * | never      | not recorded  | refused      | not recorded  |
 * | on_request | not recorded  | recorded     | not recorded  |
 * | always     | recorded      | recorded     | refused       |
 */
import type { RecordingMode } from '../config/schema.js'
import type { DomainRecording, OwnRecording } from '../directory/directory.js'
import { err, ok, type Result } from '../util/result.js'

/** A record of the directory that may carry a policy of its own (a group, a user). */
interface PolicyHolder {
  readonly name: string
  readonly recording?: OwnRecording
}

export interface RecordingQuestion {
  readonly domain: { readonly name: string; readonly recording: DomainRecording }
  /** The group the call is made for, if any. */
  readonly group?: PolicyHolder
  /** The originating user, if any. */
  readonly user?: PolicyHolder
  /** The request's `record`: absent when it did not say. */
  readonly requested: boolean | undefined
}

export interface RecordingDecision {
  readonly record: boolean
  /** How long a recording of this call is kept. */
  readonly retentionDays: number
  /** Whose policy decided ("group sales", "user alice", "domain example.test"), for descriptions and logs. */
  readonly decidedBy: string
}

export interface RecordingRefusal {
  readonly reason: 'recording_not_allowed'
  readonly description: string
}

interface Applicable {
  readonly mode: RecordingMode
  readonly retentionDays: number
  readonly decidedBy: string
}

function applicable(q: RecordingQuestion): Applicable {
  const domainDays = q.domain.recording.retention_days
  for (const [kind, holder] of [['group', q.group], ['user', q.user]] as const) {
    const own = holder?.recording
    if (holder !== undefined && own !== undefined) return { mode: own.mode, retentionDays: own.retention_days ?? domainDays, decidedBy: `${kind} ${holder.name}` }
  }
  return { mode: q.domain.recording.mode, retentionDays: domainDays, decidedBy: `domain ${q.domain.name}` }
}

export function decideRecording(q: RecordingQuestion): Result<RecordingDecision, RecordingRefusal> {
  const policy = applicable(q)
  const decided = (record: boolean) => ok({ record, retentionDays: policy.retentionDays, decidedBy: policy.decidedBy })
  switch (policy.mode) {
    case 'never':
      if (q.requested === true) return err({ reason: 'recording_not_allowed', description: `record: the recording mode of ${policy.decidedBy} is never` })
      return decided(false)
    case 'on_request':
      return decided(q.requested === true)
    case 'always':
      if (q.requested === false) return err({ reason: 'recording_not_allowed', description: `record: false cannot turn off recording: the recording mode of ${policy.decidedBy} is always` })
      return decided(true)
  }
}
