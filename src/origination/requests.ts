/**
 * The requests in flight (request.ts, from admission to their end) and the one place their results
 * are reported: to the outcome listeners (CTI) and to the request's callback_url. A request reports
 * itself once, and only if the API was told it was placed (request.ts settle); recovery.ts reports
 * the requests an earlier run accepted through the same door.
 */
import type { Logger } from '../util/logger.js'
import { resultOf, type AttemptOutcome, type CallbackSink, type CallResult } from './outcome.js'
import type { OriginationPlan } from './plan.js'
import type { OriginationRequest, RequestLedger } from './request.js'

/** A request's final result, as delivered to its callback (also when it has no callback_url). */
export interface RequestOutcome {
  readonly requestId: string
  readonly domain: string
  readonly operation: OriginationPlan['operation']
  readonly result: CallResult
}

/** A request the API was told is placed (ticketing's `call.started`, the status events). */
export interface RequestAccepted {
  readonly plan: OriginationPlan
  /** Every originating leg it may create, as in the reply. */
  readonly uuids: readonly string[]
  /** Epoch ms. */
  readonly at: number
}

/** What a result needs to be reported: the request as the API accepted it. */
export interface ReportedRequest {
  readonly requestId: string
  readonly domain: string
  readonly operation: OriginationPlan['operation']
  readonly callbackUrl: string | undefined
}

export interface Requests extends RequestLedger {
  has(requestId: string): boolean
  /** The request is in flight from now until it leaves. */
  add(req: OriginationRequest): void
  /**
   * Reports the outcome of a request accepted by an earlier run of the daemon (recovery.ts): the
   * same listeners and callback as a request's own; recovery makes sure it is called once per request.
   */
  reportRecovered(req: ReportedRequest, outcome: AttemptOutcome): void
  inFlight(): OriginationRequest[]
  onAccepted(listener: (a: RequestAccepted) => void): () => void
  onOutcome(listener: (o: RequestOutcome) => void): () => void
  close(): void
}

export function createRequests(deps: { readonly callbacks: CallbackSink; readonly logger: Logger }): Requests {
  const log = deps.logger
  const requests = new Map<string, OriginationRequest>()
  const outcomeListeners = new Set<(o: RequestOutcome) => void>()
  const acceptedListeners = new Set<(a: RequestAccepted) => void>()

  /** A listener's failure is logged, never the caller's (a request's transition must complete). */
  const tell = <T>(listeners: ReadonlySet<(x: T) => void>, x: T): void => {
    for (const l of [...listeners]) {
      try {
        l(x)
      } catch (e) {
        log.error({ err: e }, 'request listener failed')
      }
    }
  }

  const report = (req: ReportedRequest, outcome: AttemptOutcome): void => {
    const result = resultOf(outcome)
    const o: RequestOutcome = { requestId: req.requestId, domain: req.domain, operation: req.operation, result }
    log.info({ requestId: o.requestId, domain: o.domain, result }, 'origination result')
    tell(outcomeListeners, o)
    if (req.callbackUrl !== undefined) deps.callbacks.deliver(req.domain, req.callbackUrl, result, { requestId: req.requestId })
  }

  return {
    has: (requestId) => requests.has(requestId),
    add(req) {
      requests.set(req.requestId, req)
    },
    accepted(req, uuids) {
      tell(acceptedListeners, { plan: req.plan, uuids, at: Date.now() })
    },
    leave(requestId) {
      requests.delete(requestId)
    },
    report({ plan: p }, outcome) {
      report({ requestId: p.requestId, domain: p.domain, operation: p.operation, callbackUrl: p.callbackUrl }, outcome)
    },
    reportRecovered: (req, outcome) => report(req, outcome),
    inFlight: () => [...requests.values()],
    onAccepted(listener) {
      acceptedListeners.add(listener)
      return () => acceptedListeners.delete(listener)
    },
    onOutcome(listener) {
      outcomeListeners.add(listener)
      return () => outcomeListeners.delete(listener)
    },
    close() {
      acceptedListeners.clear()
      outcomeListeners.clear()
    },
  }
}
