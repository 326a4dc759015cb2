/**
 * Whether a request may be placed at all, before FreeSWITCH is asked anything: the engine is
 * running and connected, the request id is new, the domain is known; and the channel limit
 * (channel-limit.ts), whose slots are reserved for every leg a request may create: the legs it
 * is about to ring and its destination's legs (destination-legs.ts).
 */
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { err, ok, type Result } from '../util/result.js'
import type { ChannelLimiter, LegDemand } from './channel-limit.js'
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
 * already counts them. A refusal means the engine releases what it reserved.
 */
export interface SharedLimit {
  reserve(domain: string, limit: number, wanted: number, localInUse: number): Promise<Result<void, OriginationRefusal>>
}

/**
 * The cluster's word on channels reserved locally (reserveLegs): without a cluster, yes at once;
 * refused, the originator legs are released here (the engine drops the destination's hold).
 */
export async function reserveShared(
  shared: SharedLimit | undefined,
  limiter: ChannelLimiter,
  domain: string,
  limit: number,
  demand: LegDemand,
): Promise<Result<void, OriginationRefusal>> {
  if (shared === undefined) return ok(undefined)
  const wanted = demand.uuids.length + (demand.destination?.slots ?? 0)
  const r = await shared.reserve(domain, limit, wanted, limiter.inUse(domain))
  if (!r.ok) limiter.release(...demand.uuids)
  return r
}

/**
 * Reserves every channel the request may create (its originator legs, and its destination's
 * legs for after the answer) if they all fit under the domain's limit; otherwise refuses.
 */
export function reserveLegs(limiter: ChannelLimiter, domain: string, limit: number, demand: LegDemand): Result<void, OriginationRefusal> {
  if (limiter.tryReserve(domain, limit, demand)) return ok(undefined)
  const needed = demand.uuids.length + (demand.destination?.slots ?? 0)
  return err(
    refusal(
      'channel_limit_reached',
      `domain ${domain} would exceed its channel_limit of ${limit} (${limiter.inUse(domain)} in use, ${needed} needed)`,
    ),
  )
}
