/**
 * POST {prefix}/call_external: one leg to a PSTN target through the domain's gateway, then the
 * answered leg goes to an internal destination (user, group, extension, DID, or an `xml_url:`
 * IVR). A PSTN destination is refused: this operation does not bridge two external parties.
 * The body is parsed by schema.ts; this resolves what needs the directory.
 */
import { checkPartyPresentable } from '../../calling-number.js'
import { resolveDestination } from '../../destination.js'
import { plannedRecording } from '../../recording.js'
import { plannedGuards } from '../../call-guards.js'
import { plannedStatus } from '../../status.js'
import { plannedWait } from '../../waiting.js'
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
  // No group, no user of ours rings first: the domain's policy.
  const recording = plannedRecording(b, domain, {})
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
      operation: 'call_external' as const,
      originator: { kind: 'pstn' as const, ...target.value },
      destination: destination.value,
      answerTimeoutSec: b.answer_timeout ?? DEFAULT_ANSWER_TIMEOUT_SEC,
      callbackUrl: b.callback_url,
      endUser: target.value.endUser,
      recording: recording.value,
      ...guards.value,
      status: status.value,
      ...wait.value,
    }),
  )
}
