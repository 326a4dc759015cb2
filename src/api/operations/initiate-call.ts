/**
 * POST {prefix}/initiate_call (interface.md, deprecated): the originating leg goes to a user
 * (user_name) or to a PSTN number (pstn_number); when both are given the number wins and
 * user_name is only checked for shape (legacy clients send both). ani is the number presented
 * on the PSTN leg(s); group_name gives the call a group context.
 */
import type { Destination, Originator } from '../../origination/plan.js'
import { parseDestination, parsePstnParty } from '../destination.js'
import { asBody, checkCallingNumber, checkIdentifier, has, missing, oneOf, rejectUnknown, resolveGroupRef, resolveUser } from '../params.js'
import { err, ok } from '../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, endUserOf, type OperationFn } from './common.js'

const ALLOWED = ['user_name', 'pstn_number', 'destination', 'ani', 'group_name'] as const

export const initiateCall: OperationFn = (raw, domain, requestId) => {
  const body = asBody(raw)
  if (!body.ok) return body
  const b = body.value
  const known = rejectUnknown(b, ALLOWED)
  if (!known.ok) return known
  if (!has(b, 'user_name') && !has(b, 'pstn_number')) return err(missing(oneOf(['user_name', 'pstn_number']), 'is required'))

  let originator: Originator
  if (has(b, 'pstn_number')) {
    if (has(b, 'user_name')) {
      const shape = checkIdentifier(b.user_name, 'user_name')
      if (!shape.ok) return shape
    }
    const target = parsePstnParty(b.pstn_number, 'pstn_number', domain, false)
    if (!target.ok) return target
    originator = { kind: 'pstn', ...target.value }
  } else {
    const user = resolveUser(b, domain, ['user_name'])
    if (!user.ok) return user
    if (user.value === undefined) return err(missing('user_name'))
    originator = { kind: 'user', user: user.value, autoAnswer: false }
  }

  if (!has(b, 'destination')) return err(missing('destination'))
  const parsed = parseDestination(b.destination, domain, { param: 'destination', objectForm: false, xmlUrl: false, pstn: true })
  if (!parsed.ok) return parsed
  let destination: Destination = parsed.value

  if (has(b, 'ani')) {
    const ani = checkCallingNumber(b.ani, 'ani', domain)
    if (!ani.ok) return ani
    // ani is "the ANI to use when calling the PSTN": it goes on every PSTN leg of the call.
    if (originator.kind === 'pstn') originator = { ...originator, callingNumber: ani.value }
    if (destination.kind === 'pstn') destination = { ...destination, callingNumber: ani.value }
  }

  const group = resolveGroupRef(b, domain, ['group_name'])
  if (!group.ok) return group

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
    }),
  )
}
