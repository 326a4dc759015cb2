/**
 * How the page reaches the daemon (docs/ui.md "How it connects"): a ticket from
 * `POST {prefix}/gen_ws_ticket` with the domain and token (HTTP Basic), then the WebSocket
 * `{prefix}/ws_cti` with a read-only monitor ticket: it sees every channel of the domain and may
 * command none (docs/cti.md "Monitor tickets").
 *
 * The token is sent in this one request's Authorization header, with `credentials: 'omit'`: the
 * browser neither shows its own login prompt on a 401 nor stores the credentials, so they are
 * never sent again by the browser on its own (docs/cti.md: browsers must not cache Basic
 * credentials for the daemon). The caller keeps the token in memory only.
 */

const APP_NAME = 'live-calls'

/** The ws_cti path and query a monitor ticket is asked for (and then opened: a ticket is for exactly its URI). */
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
 * Asks for a ticket. Resolves `{ ok: true, ticket }`, or `{ ok: false, status, id, description }`
 * (status 0: the daemon could not be reached).
 */
export async function requestTicket(prefix, domain, token, uri) {
  let res
  try {
    res = await fetch(`${prefix}/gen_ws_ticket`, {
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      headers: { authorization: basicAuth(domain, token), 'content-type': 'application/json' },
      body: JSON.stringify({ uri }),
    })
  } catch {
    return { ok: false, status: 0, id: 'unreachable', description: 'the daemon could not be reached' }
  }
  let body = null
  try {
    body = await res.json()
  } catch {
    body = null
  }
  if (res.ok && body !== null && typeof body.ticket === 'string') return { ok: true, ticket: body.ticket }
  const error = body !== null && typeof body.error === 'object' && body.error !== null ? body.error : {}
  return {
    ok: false,
    status: res.status,
    id: typeof error.id === 'string' ? error.id : `http_${res.status}`,
    description: typeof error.description === 'string' ? error.description : res.statusText,
  }
}

/** The WebSocket URL of `uri` with its ticket, on this page's own host (ws: or wss: as the page). */
export function socketUrl(pageLocation, uri, ticket) {
  const scheme = pageLocation.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${pageLocation.host}${uri}&ticket=${encodeURIComponent(ticket)}`
}
