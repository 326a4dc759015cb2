/**
 * POST {prefix}/initiate_call (deprecated): the originating leg goes to a user (user_name) or
 * to a PSTN number (pstn_number); when both are given the number wins and user_name is only
 * checked for shape by the schema (legacy clients send both). ani is the number presented on
 * the PSTN leg(s); group_name gives the call a group context. The body is parsed by
 * schema.ts; this resolves what needs the directory.
 */
import type { Destination, Originator } from '../../../origination/plan.js'
import { checkPresentable } from '../../calling-number.js'
import { resolveDestination } from '../../destination.js'
import { apiError } from '../../errors.js'
import { resolveGroupRef, resolveUser } from '../../records.js'
import { plannedRecording } from '../../recording.js'
import { plannedGuards } from '../../call-guards.js'
import { plannedStatus } from '../../status.js'
import { plannedWait } from '../../waiting.js'
import { parseWith } from '../../schema/parse.js'
import { err, ok } from '../../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, endUserOf, type OperationFn } from '../common.js'
import { initiateCallSchema } from './schema.js'

export const initiateCall: OperationFn = (raw, domain, requestId) => {
  const body = parseWith(initiateCallSchema, raw)
  if (!body.ok) return body
  const b = body.value

  let originator: Originator
  if (b.pstn_number !== undefined) {
    originator = { kind: 'pstn', ...b.pstn_number }
  } else {
    const user = resolveUser(b, domain, ['user_name'])
    if (!user.ok) return user
    // The schema already requires user_name or pstn_number; this keeps the type honest.
    if (user.value === undefined) return err(apiError('missing_parameter', 'user_name is required'))
    originator = { kind: 'user', user: user.value, autoAnswer: false }
  }

  const parsed = resolveDestination(b.destination, domain, { param: 'destination', objectForm: false, xmlUrl: false, pstn: true })
  if (!parsed.ok) return parsed
  let destination: Destination = parsed.value

  if (b.ani !== undefined) {
    const ani = checkPresentable(b.ani, 'ani', domain)
    if (!ani.ok) return ani
    // ani is "the ANI to use when calling the PSTN": it goes on every PSTN leg of the call.
    if (originator.kind === 'pstn') originator = { ...originator, callingNumber: ani.value }
    if (destination.kind === 'pstn') destination = { ...destination, callingNumber: ani.value }
  }

  const group = resolveGroupRef(b, domain, ['group_name'])
  if (!group.ok) return group
  const recording = plannedRecording(b, domain, { group: group.value, user: originator.kind === 'user' ? originator.user : undefined })
  if (!recording.ok) return recording
  const guards = plannedGuards(b, domain)
  if (!guards.ok) return guards
  const status = plannedStatus(b)
  if (!status.ok) return status
  const wait = plannedWait(b, domain)
  if (!wait.ok) return wait

  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'initiate_call' as const,
      originator,
      destination,
      answerTimeoutSec: DEFAULT_ANSWER_TIMEOUT_SEC,
      groupContext: group.value,
      endUser: (originator.kind === 'pstn' ? originator.endUser : undefined) ?? endUserOf(destination),
      recording: recording.value,
      ...guards.value,
      status: status.value,
      ...wait.value,
    }),
  )
}
