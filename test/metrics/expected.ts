/**
 * What the metrics tests share: the families docs/operations.md promises (its list), which the
 * scrape test finds on a live daemon and the dashboard and alert tests check their queries
 * against; the series every first scrape has; and reading one series from the text exposition.
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
  'cod_recordings_total',
  'cod_recording_bytes_total',
  'cod_recordings_on_disk',
  'cod_requests_waiting',
  'cod_channel_waits_total',
  'cod_channel_wait_seconds_total',
  'cod_originates_waiting_for_pace',
  // Process figures (prom-client's defaults).
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_heap_size_used_bytes',
] as const

/**
 * The series docs/operations.md ("Metrics", "From the first scrape") promises before anything
 * happened, for a daemon whose one domain is example.test (conf/daemon.yaml): written out here,
 * not read from src/metrics/, so that a series the daemon stops making fails the scrape test.
 */
export const FIRST_SCRAPE_SERIES: readonly string[] = [
  'cod_channels_live{domain="example.test"}',
  'cod_channel_limit{domain="example.test"}',
  'cod_channel_limit_refusals_total{domain="example.test"}',
  ...['call_user', 'call_group', 'call_external', 'initiate_call'].flatMap((operation) => [
    `cod_http_requests_total{operation="${operation}",status="200",error="none"}`,
    `cod_http_request_duration_seconds_count{operation="${operation}"}`,
    `cod_originate_duration_seconds_count{operation="${operation}"}`,
  ]),
  'cod_esl_up',
  'cod_esl_reconnects_total',
  'cod_esl_event_lag_seconds_count',
  ...['delivered', 'retried', 'dead_letter'].map((outcome) => `cod_callback_deliveries_total{outcome="${outcome}"}`),
  'cod_callback_queue_depth{state="queued"}',
  'cod_callback_queue_depth{state="in_flight"}',
  'cod_callback_oldest_pending_age_seconds',
  'cod_journal_size_bytes',
  'cod_journal_dead_letters',
  'cod_journal_pending_results',
  'cod_journal_open_requests',
  'cod_journal_write_errors_total',
  ...['started', 'completed', 'failed'].map((outcome) => `cod_recordings_total{outcome="${outcome}"}`),
  'cod_recording_bytes_total',
  'cod_recordings_on_disk',
  'cod_requests_waiting{domain="example.test"}',
  ...['taken', 'timeout', 'full', 'abandoned'].map((outcome) => `cod_channel_waits_total{outcome="${outcome}"}`),
  'cod_channel_wait_seconds_total',
  'cod_originates_waiting_for_pace',
  ...['directory', 'dialplan', 'configuration', 'phrases', 'other'].flatMap((section) => [
    `cod_xmlcurl_duration_seconds_count{section="${section}"}`,
    ...['found', 'not_found', 'refused', 'error'].map((outcome) => `cod_xmlcurl_requests_total{section="${section}",outcome="${outcome}"}`),
  ]),
  ...['document', 'json', 'play_url'].flatMap((kind) =>
    ['ok', 'blocked_address', 'bad_url', 'timeout', 'too_large', 'http_status', 'too_many_redirects', 'network', 'invalid_body'].map(
      (outcome) => `cod_ivr_fetches_total{kind="${kind}",outcome="${outcome}"}`,
    ),
  ),
]

/** The value of one series (`name{labels}` exactly as exposed) in the text exposition, undefined when absent. */
export function valueOf(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1))
  }
  return undefined
}
