/**
 * The label values known before anything happens, so that the pushed families have series (at 0)
 * from the first scrape: `rate()`, `increase()` and the alerts then see 0, not nothing, and
 * Prometheus's staleness never hides a family that merely had nothing to count yet
 * (docs/operations.md "Metrics" lists which series exist from the start).
 *
 * Each list is a Record over the type the part that reports it declares: adding an operation, a
 * fetch failure kind or an xml_curl section there fails the type check here until it is listed.
 */
import type { FetchErrorKind } from '../ivr/fetch/errors.js'
import type { Operation } from '../pbx/channel-vars.js'
import type { XmlCurlAnswer } from '../xmlcurl/exchange.js'

const keys = <K extends string>(record: Record<K, true>): readonly K[] => Object.keys(record) as K[]

/** The API operations: each has a request, latency and originate series from the start. */
export const API_OPERATIONS = keys<Operation>({ call_user: true, call_group: true, call_external: true, initiate_call: true })

/** The status and error id of the request series that exist from the start: a success. */
export const SUCCESS = { status: '200', error: 'none' } as const

export type IvrFetchKind = 'document' | 'json' | 'play_url'
export const IVR_FETCH_KINDS = keys<IvrFetchKind>({ document: true, json: true, play_url: true })

/** `ok` and every way a fetch fails (ivr/fetch/errors.ts). */
export const IVR_FETCH_OUTCOMES = keys<'ok' | FetchErrorKind>({
  ok: true,
  blocked_address: true,
  bad_url: true,
  timeout: true,
  too_large: true,
  http_status: true,
  too_many_redirects: true,
  network: true,
  invalid_body: true,
})

export const XMLCURL_SECTIONS = keys<XmlCurlAnswer['section']>({ directory: true, dialplan: true, configuration: true, phrases: true, other: true })
export const XMLCURL_OUTCOMES = keys<XmlCurlAnswer['outcome']>({ found: true, not_found: true, refused: true, error: true })
