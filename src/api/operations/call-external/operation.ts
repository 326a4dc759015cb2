/**
 * POST {prefix}/call_external: one leg to a PSTN target through the domain's gateway, then the
 * answered leg goes to an internal destination (user, group, extension, DID, or an `xml_url:`
 * IVR). A PSTN destination is refused: this operation does not bridge two external parties.
 * The body is parsed by schema.ts; this resolves what needs the directory.
 */
import { checkPartyPresentable } from '../../calling-number.js'
import { resolveDestination } from '../../destination.js'
import { parseWith } from '../../schema/parse.js'
import { ok } from '../../../util/result.js'
import { DEFAULT_ANSWER_TIMEOUT_SEC, defined, type OperationFn } from '../common.js'
import { callExternalSchema } from './schema.js'

export const callExternal: OperationFn = (raw, domain, requestId) => {
  const body = parseWith(callExternalSchema, raw)
  if (!body.ok) return body
  const b = body.value

  const target = checkPartyPresentable(b.target, 'target', domain)
  if (!target.ok) return target
  const destination = resolveDestination(b.destination, domain, { param: 'destination', objectForm: false, xmlUrl: true, pstn: false })
  if (!destination.ok) return destination

  return ok(
    defined({
      requestId,
      domain: domain.name,
      operation: 'call_external' as const,
      originator: { kind: 'pstn' as const, ...target.value },
      destination: destination.value,
      answerTimeoutSec: b.answer_timeout ?? DEFAULT_ANSWER_TIMEOUT_SEC,
      callbackUrl: b.callback_url,
      endUser: target.value.endUser,
    }),
  )
}
