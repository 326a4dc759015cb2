/**
 * Label values, bounded: a metric label never carries a UUID, a phone number or any text a
 * client chose (each distinct value is a time series Prometheus keeps). Domains are those of the
 * configuration, lower-case; anything else is folded into OTHER_DOMAIN. Paths become one of a
 * fixed set of route names.
 */

/**
 * The label value of every domain that is not configured now.
 * @internal Exported for tests: test/metrics looks for the label.
 */
export const OTHER_DOMAIN = '_other'

/** The lower-case configured name, or OTHER_DOMAIN. */
export function domainLabel(name: string | undefined, configured: ReadonlySet<string>): string {
  if (name === undefined) return OTHER_DOMAIN
  const lower = name.toLowerCase()
  return configured.has(lower) ? lower : OTHER_DOMAIN
}

/** Route names besides the operations (whose names come from the API itself). */
const FIXED_ROUTES = ['gen_ws_ticket', 'ws_cti', 'openapi'] as const

/**
 * The `operation` label of a request on the API listener: the API operation, else what the path
 * is (the ticket route, the WebSocket, the OpenAPI document, the recordings, /healthz, /metrics), else `other`
 * (a path that names nothing: its text is never a label).
 */
export function routeLabel(operation: string | undefined, path: string, prefix: string): string {
  if (operation !== undefined) return operation
  if (path === '/healthz') return 'healthz'
  if (path === '/metrics') return 'metrics'
  for (const name of FIXED_ROUTES) {
    if (path === `${prefix}/${name}` || path === `${prefix}/${name}.json`) return name
  }
  // The recordings routes (issue 28): one label for the list, one for a recording, one for its audio; the id is never a label.
  if (path === `${prefix}/recordings`) return 'recordings'
  if (path.startsWith(`${prefix}/recordings/`)) return path.endsWith('/audio') ? 'recording_audio' : 'recording'
  return 'other'
}

/** The HTTP status as a label: the three digits (a bounded set: the statuses the daemon answers). */
export const statusLabel = (status: number): string => (Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : 'other')
