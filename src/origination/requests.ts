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
  onOutcome(listener: (o: RequestOutcome) => void): () => void
  close(): void
}

export function createRequests(deps: { readonly callbacks: CallbackSink; readonly logger: Logger }): Requests {
  const log = deps.logger
  const requests = new Map<string, OriginationRequest>()
  const outcomeListeners = new Set<(o: RequestOutcome) => void>()

  const report = (req: ReportedRequest, outcome: AttemptOutcome): void => {
    const result = resultOf(outcome)
    const o: RequestOutcome = { requestId: req.requestId, domain: req.domain, operation: req.operation, result }
    log.info({ requestId: o.requestId, domain: o.domain, result }, 'origination result')
    for (const l of [...outcomeListeners]) {
      try {
        l(o)
      } catch (e) {
        log.error({ err: e }, 'outcome listener failed')
      }
    }
    if (req.callbackUrl !== undefined) deps.callbacks.deliver(req.domain, req.callbackUrl, result, { requestId: req.requestId })
  }

  return {
    has: (requestId) => requests.has(requestId),
    add(req) {
      requests.set(req.requestId, req)
    },
    leave(requestId) {
      requests.delete(requestId)
    },
    report({ plan: p }, outcome) {
      report({ requestId: p.requestId, domain: p.domain, operation: p.operation, callbackUrl: p.callbackUrl }, outcome)
    },
    reportRecovered: (req, outcome) => report(req, outcome),
    inFlight: () => [...requests.values()],
    onOutcome(listener) {
      outcomeListeners.add(listener)
      return () => outcomeListeners.delete(listener)
    },
    close() {
      outcomeListeners.clear()
    },
  }
}
