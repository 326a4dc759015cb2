/**
 * POST {prefix}/call_group: rings the members of one group, hunting them one at a time or (the
 * strategy ring_all, issue 31) all at once, then connects the answering member to the destination.
 * Timeouts and the strategy default to the group's own. The body is parsed by schema.ts; this
 * resolves what needs the directory.
 */
import type { GroupStrategy } from '../../../config/schema.js'
import { GROUP_KEYS, type Group } from '../../../directory/directory.js'
import { resolveDestination } from '../../destination.js'
import { apiError, type ApiError } from '../../errors.js'
import { resolveGroupRef } from '../../records.js'
import { oneOf } from '../../schema/identifiers.js'
import { plannedRecording } from '../../recording.js'
import { plannedGuards } from '../../call-guards.js'
import { plannedStatus } from '../../status.js'
import { plannedWait } from '../../waiting.js'
import { parseWith } from '../../schema/parse.js'
import { err, ok, type Result } from '../../../util/result.js'
import { defined, endUserOf, type OperationFn } from '../common.js'
import { callGroupSchema } from './schema.js'

/**
 * The request's strategy, else the group's own. One the group's configuration does not list is
 * refused, naming what it allows, as a time_limit over the domain's max is (api/call-guards.ts):
 * the client learns at once that it must ask for another, not by a group rung the other way.
 */
function chosenStrategy(asked: GroupStrategy | undefined, group: Group): Result<GroupStrategy, ApiError> {
  if (asked === undefined) return ok(group.strategy)
  if (group.strategies.includes(asked)) return ok(asked)
  return err(apiError('invalid_parameter', `strategy: group ${group.name} allows only ${group.strategies.join(', ')} (its configuration's strategies)`))
}

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
  const strategy = chosenStrategy(b.strategy, g)
  if (!strategy.ok) return strategy
  const recording = plannedRecording(b, domain, { group: g })
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
      operation: 'call_group' as const,
      originator: {
        kind: 'group' as const,
        group: g,
        members: domain.members(g),
        memberAnswerTimeoutSec: b.member_answer_timeout ?? g.member_answer_timeout,
        strategy: strategy.value,
      },
      destination: destination.value,
      answerTimeoutSec: b.answer_timeout ?? g.answer_timeout,
      callbackUrl: b.callback_url,
      callingName: b.calling_name,
      endUser: endUserOf(destination.value),
      recording: recording.value,
      ...guards.value,
      status: status.value,
      ...wait.value,
    }),
  )
}
