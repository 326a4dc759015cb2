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
/** @internal Exported for tests: test/ivr/runner runs a document into each bound. */
export { MAX_ERROR_JUMPS } from './session.js'
/** @internal Exported for tests: test/ivr/runner runs a document into each bound. */
export { MAX_IDLE_LOADS } from './idle-guard.js'
export type { InitialDocument } from './documents.js'
export type { ParkedCall, ParkedSource } from './call.js'
/** @internal Exported for tests: test/ivr/runner checks the registry on its own. */
export { SourceRegistry } from './registry.js'
