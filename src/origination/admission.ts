/**
 * Whether a request may be placed at all, before FreeSWITCH is asked anything: the engine is
 * running and connected, the request id is new, the domain is known. The channel limit comes
 * next, once the request knows its legs (request.ts reserve).
 */
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { err, ok, type Result } from '../util/result.js'
import type { OriginationPlan } from './plan.js'
import { refusal, STOPPING, type OriginationRefusal } from './refusal.js'

export interface AdmissionState {
  readonly closed: boolean
  readonly connected: boolean
  readonly inFlight: (requestId: string) => boolean
  readonly directory: () => Directory
}

/** The request's domain, or why the request is refused before anything is tried. */
export function admit(plan: OriginationPlan, s: AdmissionState): Result<DomainDirectory, OriginationRefusal> {
  if (s.closed) return err(STOPPING)
  if (!s.connected) return err(refusal('pbx_unavailable', 'FreeSWITCH is not connected'))
  if (s.inFlight(plan.requestId)) return err(refusal('internal', `request id ${plan.requestId} is already in use`))
  const dom = s.directory().domain(plan.domain)
  if (dom === undefined) return err(refusal('internal', `unknown domain ${plan.domain}`))
  return ok(dom)
}

/**
 * The channel limit shared with other nodes (src/cluster/, docs/cluster.md), when there is a
 * cluster: asked after the node's own limiter reserved the request's channels, so `localInUse`
 * already counts them. A refusal means the request releases what it reserved (request.ts reserve).
 */
export interface SharedLimit {
  reserve(domain: string, limit: number, wanted: number, localInUse: number): Promise<Result<void, OriginationRefusal>>
}
