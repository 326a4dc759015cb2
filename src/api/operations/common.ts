/**
 * What the four operations share: their signature (a pure function from the parsed body to a
 * plan, so each can be tested without HTTP) and the small helpers that assemble a plan.
 */
import type { DomainDirectory } from '../../directory/directory.js'
import type { Destination, OriginationPlan } from '../../origination/plan.js'
import type { EndUser } from '../../pbx/end-user.js'
import type { ApiError } from '../errors.js'
import type { Result } from '../../util/result.js'

export type OperationFn = (body: unknown, domain: DomainDirectory, requestId: string) => Result<OriginationPlan, ApiError>

/** docs/interface.md "Limits": answer_timeout of call_user and call_external (and initiate_call). */
export const DEFAULT_ANSWER_TIMEOUT_SEC = 180

/** Drops the keys whose value is undefined, so a plan has only what the request said. */
export function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T
}

export const endUserOf = (d: Destination): EndUser | undefined => (d.kind === 'pstn' ? d.endUser : undefined)
