/**
 * The requests in flight and their one result each: once a request's outcome is known it is
 * reported exactly once, to the outcome listeners (CTI) and to its callback_url, and only if
 * the API was told the request was placed (a refused request is answered by its refusal).
 */
import type { DomainDirectory } from '../directory/directory.js'
import type { Logger } from '../util/logger.js'
import type { Attempt, AttemptOwner } from './attempt.js'
import { resultOf, type AttemptOutcome, type CallbackSink, type CallResult } from './outcome.js'
import type { OriginationPlan } from './plan.js'

export interface RequestState extends AttemptOwner {
  /** Lower case: the key of counts and queues. */
  readonly domain: string
  /** The API was told the request is placed: only then is a result reported. */
  accepted: boolean
  settled: boolean
  /** The engine is closing: a hunt tries no further member. */
  stopped: boolean
  attempt: Attempt | undefined
}

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

export interface Requests {
  has(requestId: string): boolean
  open(plan: OriginationPlan, dom: DomainDirectory): RequestState
  /** Drops a request that ends without a result (the API got a refusal). */
  forget(requestId: string): void
  /** The request's outcome is known: reports it once (see the top of this file). */
  settle(req: RequestState, outcome: AttemptOutcome): void
  /**
   * Reports the outcome of a request accepted by an earlier run of the daemon (recovery.ts): the
   * same listeners and callback as settle; recovery makes sure it is called once per request.
   */
  report(req: ReportedRequest, outcome: AttemptOutcome): void
  inFlight(): RequestState[]
  onOutcome(listener: (o: RequestOutcome) => void): () => void
  close(): void
}

export function createRequests(deps: { readonly callbacks: CallbackSink; readonly logger: Logger }): Requests {
  const log = deps.logger
  const requests = new Map<string, RequestState>()
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
    open(plan, dom) {
      const req: RequestState = {
        plan,
        domainName: dom.name,
        domain: dom.name.toLowerCase(),
        accepted: false,
        settled: false,
        stopped: false,
        attempt: undefined,
      }
      requests.set(plan.requestId, req)
      return req
    },
    forget(requestId) {
      requests.delete(requestId)
    },
    settle(req, outcome) {
      if (req.settled) return
      req.settled = true
      requests.delete(req.plan.requestId)
      // The API answered this request with an error (e.g. the daemon stopped first): no result.
      if (!req.accepted) return
      const p = req.plan
      report({ requestId: p.requestId, domain: p.domain, operation: p.operation, callbackUrl: p.callbackUrl }, outcome)
    },
    report: (req, outcome) => report(req, outcome),
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
