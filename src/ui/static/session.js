/**
 * How the page reaches the daemon (docs/ui.md "How it connects"), every request with the domain
 * and token the operator typed (HTTP Basic):
 *
 * - a ticket from `POST {prefix}/gen_ws_ticket`, then the WebSocket `{prefix}/ws_cti` with it:
 *   always a read-only monitor ticket (sees every channel of the domain, commands none; docs/cti.md
 *   "Monitor tickets"), "Watch only" or not, because a ticket ends up in a web page;
 * - the hangup and transfer buttons: `POST {prefix}/calls/{uuid}/hangup|transfer` (docs/api.md
 *   "Live calls"), the token's own power, sent from this page's memory and nowhere else;
 * - the finished calls and the channel samples: `GET {prefix}/finished_calls`, `/channel_samples`.
 *
 * The token is sent in each request's Authorization header, with `credentials: 'omit'`: the
 * browser neither shows its own login prompt on a 401 nor stores the credentials, so they are
 * never sent again by the browser on its own (docs/cti.md: browsers must not cache Basic
 * credentials for the daemon). The caller keeps the token in memory only.
 */

const APP_NAME = 'live-calls'

/**
 * The ws_cti path and query the monitor ticket is asked for (and then opened: a ticket is for
 * exactly its URI). Read-only in every mode: the daemon gives a ticket that sees the whole domain
 * only with read_only=true (issue 8), and the page's commands go over HTTP instead.
 */
export function monitorUri(prefix) {
  return `${prefix}/ws_cti?app_name=${APP_NAME}&full_events=true&read_only=true`
}

/** `Basic base64(domain:token)`, the token's UTF-8 bytes as they are. */
function basicAuth(domain, token) {
  const bytes = new TextEncoder().encode(`${domain}:${token}`)
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return `Basic ${btoa(binary)}`
}

/**
 * Sends one API request with the token. Resolves `{ ok: true, body }` for a 2xx JSON answer, or
 * `{ ok: false, status, id, description }` with the daemon's error (status 0: the daemon could
 * not be reached, or did not answer within `timeoutMs`).
 */
async function apiRequest(prefix, path, domain, token, { method = 'GET', body, timeoutMs } = {}) {
  let res
  try {
    res = await fetch(`${prefix}${path}`, {
      method,
      credentials: 'omit',
      cache: 'no-store',
      headers: {
        authorization: basicAuth(domain, token),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    })
  } catch (e) {
    const timedOut = e instanceof Error && e.name === 'TimeoutError'
    return timedOut
      ? { ok: false, status: 0, id: 'no_answer', description: `the daemon did not answer within ${timeoutMs / 1000} s` }
      : { ok: false, status: 0, id: 'unreachable', description: 'the daemon could not be reached' }
  }
  let parsed = null
  try {
    parsed = await res.json()
  } catch {
    parsed = null
  }
  if (res.ok && parsed !== null && typeof parsed === 'object') return { ok: true, body: parsed }
  const error = parsed !== null && typeof parsed.error === 'object' && parsed.error !== null ? parsed.error : {}
  return {
    ok: false,
    status: res.status,
    id: typeof error.id === 'string' ? error.id : `http_${res.status}`,
    description: typeof error.description === 'string' ? error.description : res.statusText,
  }
}

/**
 * Asks for a ticket. Resolves `{ ok: true, ticket }`, or `{ ok: false, status, id, description }`
 * (status 0: the daemon could not be reached).
 */
export async function requestTicket(prefix, domain, token, uri) {
  const r = await apiRequest(prefix, '/gen_ws_ticket', domain, token, { method: 'POST', body: { uri } })
  if (!r.ok) return r
  if (typeof r.body.ticket === 'string') return { ok: true, ticket: r.body.ticket }
  return { ok: false, status: 200, id: 'no_ticket', description: 'the daemon answered without a ticket' }
}

/**
 * GETs a JSON route of the API with the token (finished calls, channel samples). Resolves
 * `{ ok: true, body }` or `{ ok: false, status, ... }` (status 0: unreachable).
 */
export function getWithToken(prefix, path, domain, token) {
  return apiRequest(prefix, path, domain, token)
}

/**
 * A command on a live leg through the HTTP control (`POST {prefix}/calls/{uuid}/{name}`, docs/api.md
 * "Live calls"): `hangup` with `{}`, `transfer` with `{ destination }`. Resolves `{ ok: true }`
 * once FreeSWITCH accepted it, or the daemon's refusal `{ ok: false, status, id, description }`
 * (e.g. 404 channel_not_found, 404 destination_not_found, 502 command_failed).
 */
export function callCommand(prefix, domain, token, uuid, name, body, timeoutMs) {
  return apiRequest(prefix, `/calls/${encodeURIComponent(uuid)}/${name}`, domain, token, { method: 'POST', body, timeoutMs })
}

/** The WebSocket URL of `uri` with its ticket, on this page's own host (ws: or wss: as the page). */
export function socketUrl(pageLocation, uri, ticket) {
  const scheme = pageLocation.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${pageLocation.host}${uri}&ticket=${encodeURIComponent(ticket)}`
}
