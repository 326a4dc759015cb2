/**
 * POST {prefix}/call_user: rings all terminals of one user, then connects the answered leg to
 * the destination. Optional group context: group_* identifiers and/or group_resolver; when
 * both are given they must name the same group. The body is parsed by schema.ts; this
 * resolves what needs the directory, in the order the client hears about it.
 */
import type { DomainDirectory, Group, User } from '../../../directory/directory.js'
import { USER_KEYS } from '../../../directory/directory.js'
import { resolveDestination } from '../../destination.js'
import { apiError, type ApiError } from '../../errors.js'
import { resolveGroupRef, resolveUser } from '../../records.js'
import { oneOf } from '../../schema/identifiers.js'
import { plannedRecording } from '../../recording.js'
import { plannedGuards } from '../../call-guards.js'
import { plannedStatus } from '../../status.js'
import { plannedWait } from '../../waiting.js'
import { parseWith } from '../../schema/parse.js'
import { err, ok, type Result } from '../../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, endUserOf, type OperationFn } from '../common.js'
import { callUserSchema, type CallUserBody } from './schema.js'

function groupContext(body: CallUserBody, domain: DomainDirectory, user: User): Result<Group | undefined, ApiError> {
  const named = resolveGroupRef(body, domain)
  if (!named.ok || body.group_resolver === undefined) return named
  const resolved = domain.resolveGroup(user, body.group_resolver)
  if (resolved === undefined) return err(apiError('group_not_found', `group_resolver ${body.group_resolver} found no group of the user`))
  if (named.value !== undefined && named.value.id !== resolved.id) {
    return err(apiError('ambiguous_group', 'group_resolver and the group_* parameters name different groups'))
  }
  return ok(resolved)
}

export const callUser: OperationFn = (raw, domain, requestId) => {
  const body = parseWith(callUserSchema, raw)
  if (!body.ok) return body
  const b = body.value

  const user = resolveUser(b, domain)
  if (!user.ok) return user
  // The schema already requires one identifier; this keeps the type honest.
  if (user.value === undefined) return err(apiError('missing_parameter', `${oneOf(USER_KEYS)} is required`))
  const destination = resolveDestination(b.destination, domain, { param: 'destination', objectForm: true, xmlUrl: false, pstn: true })
  if (!destination.ok) return destination
  const group = groupContext(b, domain, user.value)
  if (!group.ok) return group
  const recording = plannedRecording(b, domain, { group: group.value, user: user.value })
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
      operation: 'call_user' as const,
      originator: { kind: 'user' as const, user: user.value, autoAnswer: b.auto_answer ?? false },
      destination: destination.value,
      answerTimeoutSec: b.answer_timeout ?? DEFAULT_ANSWER_TIMEOUT_SEC,
      callbackUrl: b.callback_url,
      callingName: b.calling_name,
      groupContext: group.value,
      endUser: endUserOf(destination.value),
      recording: recording.value,
      ...guards.value,
      status: status.value,
      ...wait.value,
    }),
  )
}
