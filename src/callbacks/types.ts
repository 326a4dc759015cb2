/**
 * The contract between the origination engine and callback delivery. The result shapes and
 * the sink interface belong to the engine (src/origination/outcome.ts); they are re-exported
 * here so that this part's modules and tests import one place.
 */
export type { CallResult, CallbackSink, CallErrorId } from '../origination/outcome.js'

/** The `callbacks` section of daemon.yaml (src/config/schema.ts), read at each use (SIGHUP). */
export interface CallbackSettings {
  timeout_ms: number
  backoff_initial_ms: number
  backoff_max_ms: number
  /** Retries go on until this long after the result was handed over (default 24 h). */
  give_up_after_ms: number
  concurrency_per_domain: number
  /** Deprecated and ignored: retries go by time (give_up_after_ms). */
  max_attempts?: number
  /** Deprecated: a spool file left by an older version is moved into the journal at start. */
  spool_file?: string
  /** CIDRs callbacks may reach although refused by the address guard (`callbacks.allow`); absent: none. */
  allow?: readonly string[]
}
