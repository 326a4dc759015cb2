/**
 * POST {prefix}/call_group (interface.md): hunts the members of one group one at a time, then
 * connects the answering member to the destination. Timeouts default to the group's own.
 */
import { GROUP_KEYS } from '../../directory/directory.js'
import { parseDestination } from '../destination.js'
import {
  asBody,
  has,
  missing,
  oneOf,
  optionalCallbackUrl,
  optionalCallingName,
  optionalTimeout,
  rejectUnknown,
  resolveGroupRef,
} from '../params.js'
import { err, ok } from '../../util/result.js'
import { defined, endUserOf, type OperationFn } from './common.js'

const ALLOWED = [...GROUP_KEYS, 'destination', 'answer_timeout', 'member_answer_timeout', 'calling_name', 'callback_url'] as const

export const callGroup: OperationFn = (raw, domain, requestId) => {
  const body = asBody(raw)
  if (!body.ok) return body
  const b = body.value
  const known = rejectUnknown(b, ALLOWED)
  if (!known.ok) return known

  const group = resolveGroupRef(b, domain)
  if (!group.ok) return group
  if (group.value === undefined) return err(missing(oneOf(GROUP_KEYS), 'is required'))

  if (!has(b, 'destination')) return err(missing('destination'))
  const destination = parseDestination(b.destination, domain, { param: 'destination', objectForm: true, xmlUrl: false, pstn: true })
  if (!destination.ok) return destination

  const answerTimeout = optionalTimeout(b, 'answer_timeout')
  if (!answerTimeout.ok) return answerTimeout
  const memberTimeout = optionalTimeout(b, 'member_answer_timeout')
  if (!memberTimeout.ok) return memberTimeout
  const callingName = optionalCallingName(b)
  if (!callingName.ok) return callingName
  const callbackUrl = optionalCallbackUrl(b)
  if (!callbackUrl.ok) return callbackUrl

  const g = group.value
  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'call_group' as const,
      originator: {
        kind: 'group' as const,
        group: g,
        members: domain.members(g),
        memberAnswerTimeoutSec: memberTimeout.value ?? g.member_answer_timeout,
      },
      destination: destination.value,
      answerTimeoutSec: answerTimeout.value ?? g.answer_timeout,
      callbackUrl: callbackUrl.value,
      callingName: callingName.value,
      endUser: endUserOf(destination.value),
    }),
  )
}
