/**
 * POST {prefix}/call_external (interface.md): one leg to a PSTN target through the domain's
 * gateway, then the answered leg goes to an internal destination (user, group, extension,
 * DID, or an `xml_url:` IVR). A PSTN destination is refused: this operation does not bridge
 * two external parties.
 */
import { parseDestination, parsePstnParty } from '../destination.js'
import { asBody, has, missing, optionalCallbackUrl, optionalTimeout, rejectUnknown } from '../params.js'
import { err, ok } from '../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, type OperationFn } from './common.js'

const ALLOWED = ['target', 'answer_timeout', 'destination', 'callback_url'] as const

export const callExternal: OperationFn = (raw, domain, requestId) => {
  const body = asBody(raw)
  if (!body.ok) return body
  const b = body.value
  const known = rejectUnknown(b, ALLOWED)
  if (!known.ok) return known

  if (!has(b, 'target')) return err(missing('target'))
  const target = parsePstnParty(b.target, 'target', domain, true)
  if (!target.ok) return target

  if (!has(b, 'destination')) return err(missing('destination'))
  const destination = parseDestination(b.destination, domain, { param: 'destination', objectForm: false, xmlUrl: true, pstn: false })
  if (!destination.ok) return destination

  const answerTimeout = optionalTimeout(b, 'answer_timeout')
  if (!answerTimeout.ok) return answerTimeout
  const callbackUrl = optionalCallbackUrl(b)
  if (!callbackUrl.ok) return callbackUrl

  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'call_external' as const,
      originator: { kind: 'pstn' as const, ...target.value },
      destination: destination.value,
      answerTimeoutSec: answerTimeout.value ?? DEFAULT_ANSWER_TIMEOUT_SEC,
      callbackUrl: callbackUrl.value,
      endUser: target.value.endUser,
    }),
  )
}
