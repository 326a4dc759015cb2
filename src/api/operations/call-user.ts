/**
 * POST {prefix}/call_user (interface.md): rings all terminals of one user, then connects the
 * answered leg to the destination. Optional group context: group_* identifiers and/or
 * group_resolver ("*" or "any:CALL_CENTER"); when both are given they must name the same group.
 */
import { GROUP_KEYS, USER_KEYS, type DomainDirectory, type Group, type User } from '../../directory/directory.js'
import { apiError, type ApiError } from '../errors.js'
import { parseDestination } from '../destination.js'
import {
  asBody,
  has,
  invalid,
  missing,
  oneOf,
  optionalBoolean,
  optionalCallbackUrl,
  optionalCallingName,
  optionalTimeout,
  rejectUnknown,
  resolveGroupRef,
  resolveUser,
  type Body,
} from '../params.js'
import { err, ok, type Result } from '../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, endUserOf, type OperationFn } from './common.js'

const RESOLVERS = ['*', 'any:CALL_CENTER'] as const
type Resolver = (typeof RESOLVERS)[number]
const isResolver = (v: unknown): v is Resolver => (RESOLVERS as readonly unknown[]).includes(v)

const ALLOWED = [
  ...USER_KEYS,
  'answer_timeout',
  'destination',
  'callback_url',
  'auto_answer',
  'calling_name',
  ...GROUP_KEYS,
  'group_resolver',
] as const

function groupContext(body: Body, domain: DomainDirectory, user: User): Result<Group | undefined, ApiError> {
  const named = resolveGroupRef(body, domain)
  if (!named.ok) return named
  if (!has(body, 'group_resolver')) return named
  const resolver = body.group_resolver
  if (!isResolver(resolver)) return err(invalid('group_resolver', 'must be "*" or "any:CALL_CENTER"'))
  const resolved = domain.resolveGroup(user, resolver)
  if (resolved === undefined) {
    return err(apiError('group_not_found', `group_resolver ${resolver} found no group of the user`))
  }
  if (named.value !== undefined && named.value.id !== resolved.id) {
    return err(apiError('ambiguous_group', 'group_resolver and the group_* parameters name different groups'))
  }
  return ok(resolved)
}

export const callUser: OperationFn = (raw, domain, requestId) => {
  const body = asBody(raw)
  if (!body.ok) return body
  const b = body.value
  const known = rejectUnknown(b, ALLOWED)
  if (!known.ok) return known

  const user = resolveUser(b, domain)
  if (!user.ok) return user
  if (user.value === undefined) return err(missing(oneOf(USER_KEYS), 'is required'))

  if (!has(b, 'destination')) return err(missing('destination'))
  const destination = parseDestination(b.destination, domain, { param: 'destination', objectForm: true, xmlUrl: false, pstn: true })
  if (!destination.ok) return destination

  const answerTimeout = optionalTimeout(b, 'answer_timeout')
  if (!answerTimeout.ok) return answerTimeout
  const callbackUrl = optionalCallbackUrl(b)
  if (!callbackUrl.ok) return callbackUrl
  const autoAnswer = optionalBoolean(b, 'auto_answer')
  if (!autoAnswer.ok) return autoAnswer
  const callingName = optionalCallingName(b)
  if (!callingName.ok) return callingName
  const group = groupContext(b, domain, user.value)
  if (!group.ok) return group

  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'call_user' as const,
      originator: { kind: 'user' as const, user: user.value, autoAnswer: autoAnswer.value ?? false },
      destination: destination.value,
      answerTimeoutSec: answerTimeout.value ?? DEFAULT_ANSWER_TIMEOUT_SEC,
      callbackUrl: callbackUrl.value,
      callingName: callingName.value,
      groupContext: group.value,
      endUser: endUserOf(destination.value),
    }),
  )
}
