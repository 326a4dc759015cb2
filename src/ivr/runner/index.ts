/**
 * The XML IVR runner (docs/ivr.md). Wiring:
 *
 *   const fetcher = createFetcher({ allow, logger, accept: acceptIvrDocument })
 *   const ivr = createIvrRunner({ pbx, runtime: () => store.current(), fetcher, logger })
 *   xmlCurlListener({ runtime, logger, ivr })        // IvrHandoff: ivr.has(domain, key)
 *   engine: ivr.register(plan.domain, plan.requestId, destination.source) before originating
 *   shutdown: await ivr.close() before the PBX connection closes
 */
export { createIvrRunner, acceptIvrDocument, type IvrRunner, type IvrRunnerDeps } from './runner.js'
export { IvrSession, MAX_ERROR_JUMPS, FAILURE_CAUSE } from './session.js'
export { MAX_IDLE_LOADS, MAX_IDLE_STEPS } from './idle-guard.js'
export type { InitialDocument } from './documents.js'
export { readParkedCall, isIvrPark, type ParkedCall, type ParkedSource } from './call.js'
export { SourceRegistry, DEFAULT_SOURCE_TTL_MS, DEFAULT_MAX_SOURCES } from './registry.js'
