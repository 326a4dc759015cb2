/**
 * What the metrics tests share: the families docs/operations.md promises (its list), which the
 * scrape test finds on a live daemon and the dashboard and alert tests check their queries
 * against, and reading one series from the text exposition.
 */
export const FAMILIES = [
  'cod_http_requests_total',
  'cod_http_request_duration_seconds',
  'cod_originate_duration_seconds',
  'cod_channel_limit_refusals_total',
  'cod_channels_live',
  'cod_channel_limit',
  'cod_esl_up',
  'cod_esl_reconnects_total',
  'cod_esl_event_lag_seconds',
  'cod_callback_deliveries_total',
  'cod_callback_queue_depth',
  'cod_callback_oldest_pending_age_seconds',
  'cod_journal_size_bytes',
  'cod_journal_dead_letters',
  'cod_journal_pending_results',
  'cod_journal_open_requests',
  'cod_journal_write_errors_total',
  'cod_ivr_fetches_total',
  'cod_xmlcurl_requests_total',
  'cod_xmlcurl_duration_seconds',
  // Process figures (prom-client's defaults).
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_heap_size_used_bytes',
] as const

/** The value of one series (`name{labels}` exactly as exposed) in the text exposition, undefined when absent. */
export function valueOf(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1))
  }
  return undefined
}
