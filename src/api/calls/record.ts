/**
 * The live calls' record command (issue 29 item 2, `POST {prefix}/calls/{uuid}/record`;
 * docs/recording.md "Recording a live call"): starts or stops recording one leg with FreeSWITCH's
 * `uuid_record`, as the dialplan's record_session would have (the same media bug: the same
 * RECORD_START / RECORD_STOP, test/fixtures/freeswitch/esl/48-uuid-record.txt).
 *
 * - Who may: the leg must be the domain's and live (else channel_not_found, nothing sent). The
 *   recording policy that applies to the leg decides, as src/recording/policy.ts decides for a new
 *   call: the group's for a leg made for a group (cod_group_id), else its user's, else the
 *   domain's. `start` asks `record: true` (refused where never), `stop` asks `record: false`
 *   (refused where always): recording_not_allowed.
 * - The leg's recording: the one this command started on it, else the one its cod_recording_id
 *   names (the dialplan's), while its record says `recording`. A start while there is one, or a
 *   stop without one, is recording_conflict (so is a second command on the leg while one runs).
 * - Start: a new recording id (recording/id.ts), its file made by the store
 *   (`<recording.dir>/<domain>/<id>.wav`, through util/confined-path.ts: nothing of the request is in
 *   it), its record written before FreeSWITCH is asked (the reply shows it), then
 *   `uuid_setvar cod_recording_id <id>` (so recording/follow.ts takes the leg's RECORD_* events as
 *   this recording's), `uuid_setvar RECORD_STEREO true` (one party per channel, as the dialplan
 *   records) and `uuid_record <uuid> start <file>`. FreeSWITCH refusing any of them leaves the
 *   record `failed` with its answer.
 * - Stop: `uuid_record <leg> stop <file>` on the leg the recording is on (the dialplan records the
 *   answered leg, which may be the other leg of the call). RECORD_STOP completes the record and
 *   sends its notice (follow.ts), as at a hangup.
 */
import type { ChannelModel, ChannelRecord } from '../../channels/index.js'
import type { DomainDirectory } from '../../directory/directory.js'
import { CHANNEL_VARS } from '../../pbx/channel-vars.js'
import { uuidRecord, uuidSetVar } from '../../pbx/commands.js'
import type { EslCommand } from '../../pbx/types.js'
import { newRecordingId } from '../../recording/id.js'
import { decideRecording } from '../../recording/policy.js'
import type { RecordingRecord, RecordingStore } from '../../recording/store.js'
import { viewOf } from '../../recording/view.js'
import type { Logger } from '../../util/logger.js'
import { err, ok, type Result } from '../../util/result.js'
import { apiError, type ApiError } from '../errors.js'
import type { LiveCalls } from './routes.js'
import type { RecordAction } from './schema.js'

/** The recordings, as the daemon hands them to CTI (which may not import src/recording itself). */
export type LegRecordings = RecordingStore

export interface LegRecorderDeps {
  readonly channels: ChannelModel
  /** The domain's leg named by `uuid`, live or not, or undefined (cti/call-control.ts visibleChannel: channel_not_found for any other). */
  readonly find: (domain: string, uuid: string) => ChannelRecord | undefined
  /** Runs the commands on the leg, FreeSWITCH's answer deciding (cti/call-control.ts runOnChannel). */
  readonly run: (uuid: string, commands: readonly EslCommand[]) => Promise<Result<void, ApiError>>
  readonly recordings?: LegRecordings
  readonly logger: Logger
}

export interface LegRecorder {
  readonly record: LiveCalls['record']
}

const conflict = (description: string): ApiError => apiError('recording_conflict', description)

/** The recording policy's answer for this leg to `record: requested` (policy.ts: the group it was made for, its user, the domain). */
function policyFor(domain: DomainDirectory, ch: ChannelRecord, requested: boolean | undefined) {
  const groupId = ch.vars[CHANNEL_VARS.groupId]
  const group = groupId === undefined || groupId === '' ? undefined : domain.groupById(groupId)
  const user = ch.userId === undefined ? undefined : domain.userById(ch.userId)
  return decideRecording({
    domain: { name: domain.name, recording: domain.config.recording },
    ...(group !== undefined ? { group } : {}),
    ...(user !== undefined ? { user } : {}),
    requested,
  })
}

/** `start` asks to record, `stop` asks not to: the refusal, if the policy refuses. */
function policyRefusal(domain: DomainDirectory, ch: ChannelRecord, action: RecordAction): ApiError | undefined {
  const decided = policyFor(domain, ch, action === 'start')
  if (decided.ok) return undefined
  const what = action === 'start' ? 'this leg may not be recorded' : 'the recording of this leg cannot be stopped'
  return apiError('recording_not_allowed', `${what}: ${decided.error.description.replace(/^record(: false cannot turn off recording)?: /, '')}`)
}

export function createLegRecorder(deps: LegRecorderDeps): LegRecorder {
  /** Leg uuid → the recording this command started on it (the channel model does not see uuid_setvar). */
  const started = new Map<string, string>()
  /** Legs with a record command under way: a second one waits for nothing, it is a conflict. */
  const busy = new Set<string>()

  /** The recording in progress on the leg, if any. */
  const current = (store: RecordingStore, domain: string, ch: ChannelRecord): RecordingRecord | undefined => {
    for (const id of [started.get(ch.uuid), ch.vars[CHANNEL_VARS.recordingId]]) {
      if (id === undefined) continue
      const r = store.get(domain, id)
      if (r?.status === 'recording') return r
    }
    return undefined
  }

  const forgetGone = (): void => {
    for (const uuid of started.keys()) {
      const ch = deps.channels.get(uuid)
      if (ch === undefined || ch.hangupAt !== undefined) started.delete(uuid)
    }
  }

  const built = (commands: ReadonlyArray<Result<EslCommand, { field: string; reason: string }>>): Result<EslCommand[], ApiError> => {
    const out: EslCommand[] = []
    for (const c of commands) {
      if (!c.ok) return err(apiError('internal_error', `the recording command could not be written: ${c.error.field}: ${c.error.reason}`))
      out.push(c.value)
    }
    return ok(out)
  }

  const start = async (store: RecordingStore, domain: DomainDirectory, ch: ChannelRecord): Promise<Result<RecordingRecord, ApiError>> => {
    const now = current(store, domain.name, ch)
    if (now !== undefined) return err(conflict(`the leg is already being recorded: recording ${now.id}`))
    // recording/follow.ts keeps only legs the daemon placed (their events name the request).
    if (ch.requestId === undefined) return err(apiError('recording_not_allowed', 'this leg was not placed through the API (it has no request id): its recording could not be followed'))
    const id = newRecordingId()
    const file = store.recordingFile(domain.name, id)
    if (!file.ok) return err(apiError('internal_error', `the recording file could not be made: ${file.error}`))
    const commands = built([
      uuidSetVar(ch.uuid, CHANNEL_VARS.recordingId, id),
      uuidSetVar(ch.uuid, 'RECORD_STEREO', 'true'),
      uuidRecord(ch.uuid, 'start', file.value),
    ])
    if (!commands.ok) return commands
    const begun = await store.begin({ id, requestId: ch.requestId, domain: domain.name, legs: [ch.uuid], startedAt: Date.now(), ...retentionOf(domain, ch) })
    if (!begun.ok) return err(apiError('internal_error', `the recording's record could not be written: ${begun.error}`))
    started.set(ch.uuid, id)
    const ran = await deps.run(ch.uuid, commands.value)
    if (!ran.ok) {
      started.delete(ch.uuid)
      await store.fail(id, `FreeSWITCH did not start it: ${ran.error.description}`)
      return ran
    }
    return ok(store.get(domain.name, id) ?? begun.value)
  }

  const stop = async (store: RecordingStore, domain: DomainDirectory, ch: ChannelRecord): Promise<Result<void, ApiError>> => {
    const now = current(store, domain.name, ch)
    if (now === undefined) return err(conflict('the leg is not being recorded'))
    const leg = now.legs[0] ?? ch.uuid
    const file = store.recordingFile(domain.name, now.id)
    if (!file.ok) return err(apiError('internal_error', `the recording file could not be named: ${file.error}`))
    const commands = built([uuidRecord(leg, 'stop', file.value)])
    if (!commands.ok) return commands
    const ran = await deps.run(leg, commands.value)
    if (!ran.ok) return ran
    if (started.get(leg) === now.id) started.delete(leg)
    return ok(undefined)
  }

  return {
    async record(domain, uuid, action) {
      const found = deps.find(domain.name, uuid)
      if (found === undefined || found.hangupAt !== undefined) return err(apiError('channel_not_found', `no live channel ${JSON.stringify(uuid.slice(0, 64))} in this domain`))
      const store = deps.recordings
      if (store === undefined) return err(apiError('internal_error', 'this daemon has no recording store'))
      const refused = policyRefusal(domain, found, action)
      if (refused !== undefined) return err(refused)
      if (busy.has(uuid)) return err(conflict('another record command on this leg is under way'))
      busy.add(uuid)
      try {
        forgetGone()
        const done = action === 'start' ? await start(store, domain, found) : await stop(store, domain, found)
        deps.logger.info({ cmd: `record ${action}`, uuid, domain: domain.name, ...(done.ok ? {} : { error: done.error.id }) }, done.ok ? 'api call command done' : 'api call command failed')
        if (!done.ok) return done
        return ok(done.value === undefined ? undefined : viewOf(done.value))
      } finally {
        busy.delete(uuid)
      }
    },
  }
}

/** How long the recording is kept: the retention of the policy that applies to the leg. */
function retentionOf(domain: DomainDirectory, ch: ChannelRecord): { retentionDays?: number } {
  const decided = policyFor(domain, ch, undefined)
  return decided.ok ? { retentionDays: decided.value.retentionDays } : {}
}
