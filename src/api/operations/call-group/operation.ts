/**
 * POST {prefix}/call_group: hunts the members of one group one at a time, then connects the
 * answering member to the destination. Timeouts default to the group's own. The body is parsed
 * by schema.ts; this resolves what needs the directory.
 */
import { GROUP_KEYS } from '../../../directory/directory.js'
import { resolveDestination } from '../../destination.js'
import { apiError } from '../../errors.js'
import { resolveGroupRef } from '../../records.js'
import { oneOf } from '../../schema/identifiers.js'
import { plannedRecording } from '../../recording.js'
import { plannedGuards } from '../../call-guards.js'
import { plannedStatus } from '../../status.js'
import { parseWith } from '../../schema/parse.js'
import { err, ok } from '../../../util/result.js'
import { defined, endUserOf, type OperationFn } from '../common.js'
import { callGroupSchema } from './schema.js'

export const callGroup: OperationFn = (raw, domain, requestId) => {
  const body = parseWith(callGroupSchema, raw)
  if (!body.ok) return body
  const b = body.value

  const group = resolveGroupRef(b, domain)
  if (!group.ok) return group
  // The schema already requires one identifier; this keeps the type honest.
  if (group.value === undefined) return err(apiError('missing_parameter', `${oneOf(GROUP_KEYS)} is required`))
  const destination = resolveDestination(b.destination, domain, { param: 'destination', objectForm: true, xmlUrl: false, pstn: true })
  if (!destination.ok) return destination

  const g = group.value
  const recording = plannedRecording(b, domain, { group: g })
  if (!recording.ok) return recording
  const guards = plannedGuards(b, domain)
  if (!guards.ok) return guards
  const status = plannedStatus(b)
  if (!status.ok) return status
  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'call_group' as const,
      originator: {
        kind: 'group' as const,
        group: g,
        members: domain.members(g),
        memberAnswerTimeoutSec: b.member_answer_timeout ?? g.member_answer_timeout,
      },
      destination: destination.value,
      answerTimeoutSec: b.answer_timeout ?? g.answer_timeout,
      callbackUrl: b.callback_url,
      callingName: b.calling_name,
      endUser: endUserOf(destination.value),
      recording: recording.value,
      ...guards.value,
      status: status.value,
    }),
  )
}
