/**
 * calling_number / ani: the directory's part of a presented number. Its shape is the schema's
 * (schema/numbers.ts); whether this domain may present it is known only here, after the parse.
 */
import type { DomainDirectory } from '../directory/directory.js'
import { apiError, type ApiError } from './errors.js'
import type { PstnParty } from './schema/party.js'
import { err, ok, type Result } from '../util/result.js'

export function checkPresentable(number: string, param: string, domain: DomainDirectory): Result<string, ApiError> {
  return domain.mayPresent(number) ? ok(number) : err(apiError('invalid_parameter', `${param}: is not one of the calling numbers this domain may present`))
}

/** A party's calling_number, if it has one, must be presentable (`param` names the party). */
export function checkPartyPresentable(party: PstnParty, param: string, domain: DomainDirectory): Result<PstnParty, ApiError> {
  if (party.callingNumber === undefined) return ok(party)
  const c = checkPresentable(party.callingNumber, `${param}.calling_number`, domain)
  return c.ok ? ok(party) : c
}
