/**
 * The query of `GET {prefix}/ws_cti` and the URI a ticket is bound to. The rules follow the
 * API's (docs/design.md "HTTP API decisions"): unknown parameters are refused by name, booleans are
 * `true`/`false`, and user identifiers have the shapes the configuration enforces.
 */
import { NAME_RE } from '../config/schema.js'
import { USER_KEYS, type UserKey } from '../directory/directory.js'
import type { ApiError } from '../api/errors.js'
import { invalid, missing, oneOf } from '../api/params.js'
import { strictTextProblem } from '../api/schema/text.js'
import { err, ok, type Result } from '../util/result.js'

export interface CtiQuery {
  readonly appName: string
  /** Every channel of the domain (API-token authentication only). */
  readonly fullEvents: boolean
  /** The user identifiers given (none when fullEvents), in the shape `resolveUser` reads. */
  readonly user: Readonly<Partial<Record<UserKey, string>>>
  readonly forced: boolean
  /** The connection observes only: every command is refused (policy.ts mayCommand). */
  readonly readOnly: boolean
  readonly ticket: string | undefined
}

const ALLOWED: readonly string[] = ['app_name', ...USER_KEYS, 'full_events', 'read_only', 'forced', 'ticket']
const TICKET_RE = /^[A-Za-z0-9_-]{1,128}$/
const MAX_URI_LENGTH = 2048

const isUserKey = (k: string): k is UserKey => (USER_KEYS as readonly string[]).includes(k)

function parseBool(value: string, key: string): Result<boolean, ApiError> {
  if (value === 'true') return ok(true)
  if (value === 'false') return ok(false)
  return err(invalid(key, 'must be true or false'))
}

export function parseCtiQuery(params: URLSearchParams): Result<CtiQuery, ApiError> {
  const seen = new Set<string>()
  for (const key of params.keys()) {
    if (!ALLOWED.includes(key)) return err(invalid(key, 'unknown parameter'))
    if (seen.has(key)) return err(invalid(key, 'is given more than once'))
    seen.add(key)
  }
  const appName = params.get('app_name')
  if (appName === null) return err(missing('app_name', 'is required (names the application; connections are limited per user and app_name)'))
  if (!NAME_RE.test(appName)) return err(invalid('app_name', 'must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit'))

  let fullEvents = false
  const fe = params.get('full_events')
  if (fe !== null) {
    const b = parseBool(fe, 'full_events')
    if (!b.ok) return b
    fullEvents = b.value
  }
  let forced = false
  const fo = params.get('forced')
  if (fo !== null) {
    const b = parseBool(fo, 'forced')
    if (!b.ok) return b
    forced = b.value
  }
  let readOnly = false
  const ro = params.get('read_only')
  if (ro !== null) {
    const b = parseBool(ro, 'read_only')
    if (!b.ok) return b
    readOnly = b.value
  }
  const ticket = params.get('ticket') ?? undefined
  if (ticket !== undefined && !TICKET_RE.test(ticket)) return err(invalid('ticket', 'is not a ticket from gen_ws_ticket'))

  const user: Partial<Record<UserKey, string>> = {}
  for (const [key, value] of params) if (isUserKey(key)) user[key] = value
  const given = Object.keys(user).length
  if (fullEvents && given > 0) return err(invalid('full_events', 'true cannot be combined with user_* parameters'))
  if (!fullEvents && given === 0) return err(missing(oneOf([...USER_KEYS, 'full_events=true']), 'is required'))
  return ok({ appName, fullEvents, user, forced, readOnly, ticket })
}

/**
 * The URI a ticket is bound to: the path and the query without its `ticket` parameter,
 * re-serialised so that equivalent encodings (`%20` and `+`) compare equal. Parameter order
 * is kept: the ticket is for exactly that URI.
 */
export function ticketUri(pathname: string, params: URLSearchParams): string {
  const rest = new URLSearchParams()
  for (const [k, v] of params) if (k !== 'ticket') rest.append(k, v)
  const q = rest.toString()
  return q === '' ? pathname : `${pathname}?${q}`
}

/** A request target (`/api/ws_cti?...`) as a URL; undefined when it is not one. */
export function parseTarget(target: string): URL | undefined {
  if (!target.startsWith('/') || target.startsWith('//')) return undefined
  try {
    return new URL(target, 'http://localhost')
  } catch {
    return undefined
  }
}

export interface TicketRequest {
  readonly query: CtiQuery
  /** What `ticketUri` gives for the connection the ticket is meant for. */
  readonly uri: string
}

/**
 * The `uri` of a gen_ws_ticket body: the ws_cti path with its query, or a whole ws/wss/http/https
 * URL (only its path and query count). It must be a valid ws_cti query without `ticket`, and
 * `full_events=true` only together with `read_only=true`: a ticket ends up in a web page, so one
 * that sees every channel of the domain may command none of them (docs/cti.md "Monitor
 * tickets"); full control of every channel needs API-token authentication on the WebSocket.
 */
export function parseTicketRequest(uri: unknown, wsPath: string): Result<TicketRequest, ApiError> {
  if (typeof uri !== 'string') return err(invalid('uri', 'must be a string'))
  if (uri.length === 0 || uri.length > MAX_URI_LENGTH) return err(invalid('uri', `must be 1-${MAX_URI_LENGTH} characters`))
  // The URL parser drops C0 controls and spaces at the ends, and tabs and newlines inside: such a
  // uri would be issued a ticket for another text than the client sent. Refused as every strict string is.
  const unsafe = strictTextProblem(uri)
  if (unsafe !== undefined) return err(invalid('uri', unsafe))
  let url: URL | undefined
  if (uri.startsWith('/')) url = parseTarget(uri)
  else {
    try {
      url = new URL(uri)
    } catch {
      url = undefined
    }
    if (url !== undefined && !['ws:', 'wss:', 'http:', 'https:'].includes(url.protocol)) url = undefined
  }
  if (url === undefined) return err(invalid('uri', `must be ${wsPath}?<query> or a ws/wss URL of it`))
  if (url.pathname !== wsPath) return err(invalid('uri', `must have the path ${wsPath}`))
  if (url.searchParams.has('ticket')) return err(invalid('uri', 'must not contain a ticket'))
  const query = parseCtiQuery(url.searchParams)
  if (!query.ok) return err({ ...query.error, description: `uri: ${query.error.description}` })
  if (query.value.fullEvents && !query.value.readOnly) {
    return err(
      invalid('uri', 'full_events=true can be carried by a ticket only with read_only=true; full control needs API-token (Basic) authentication on the WebSocket'),
    )
  }
  return ok({ query: query.value, uri: ticketUri(url.pathname, url.searchParams) })
}
