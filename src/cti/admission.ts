/**
 * Who may open `GET {prefix}/ws_cti`, decided before the WebSocket upgrade: a refused request
 * gets a plain HTTP error with the API's JSON error body (401/400/404) and is never upgraded.
 *
 * Order: the query (400) before the credentials (401), so that a malformed request does not
 * consume a ticket; then the user (404 / 400 ambiguous).
 */
import type { IncomingMessage } from 'node:http'
import { authenticate } from '../api/auth.js'
import { apiError, type ApiError } from '../api/errors.js'
import { resolveUser } from '../api/params.js'
import type { Directory, DomainDirectory } from '../directory/directory.js'
import { err, ok, type Result } from '../util/result.js'
import type { Admission } from './hub.js'
import { channelLimitShown } from './policy.js'
import { parseCtiQuery, ticketUri } from './query.js'
import type { RedeemError, TicketStore } from './tickets.js'

const TICKET_REFUSED: Record<RedeemError, string> = {
  unknown: 'the ticket is unknown or was already used (a ticket is good for one connection attempt)',
  expired: 'the ticket has expired; get a new one from gen_ws_ticket just before connecting',
  wrong_uri: 'the ticket was issued for another URI: connect to exactly the uri given to gen_ws_ticket, plus the ticket',
}

export function admit(req: IncomingMessage, url: URL, directory: Directory, tickets: TicketStore): Result<Admission, ApiError> {
  const query = parseCtiQuery(url.searchParams)
  if (!query.ok) return query
  const q = query.value

  let domain: DomainDirectory | undefined
  const credential = q.ticket !== undefined ? 'ticket' : 'token'
  if (q.ticket !== undefined) {
    // gen_ws_ticket issues none such; checked again so that the rule stands on its own.
    if (q.fullEvents && !q.readOnly) {
      return err(apiError('unauthorized', 'full_events=true needs read_only=true with a ticket (or API-token, HTTP Basic, authentication)'))
    }
    const redeemed = tickets.redeem(q.ticket, ticketUri(url.pathname, url.searchParams))
    if (!redeemed.ok) return err(apiError('unauthorized', TICKET_REFUSED[redeemed.error]))
    domain = directory.domain(redeemed.value)
    if (domain === undefined) return err(apiError('unauthorized', TICKET_REFUSED.unknown))
  } else {
    const auth = authenticate(req.headers.authorization, directory)
    if (!auth.ok) return auth
    domain = auth.value
  }

  let userId: string | undefined
  if (!q.fullEvents) {
    const user = resolveUser(q.user, domain)
    if (!user.ok) return user
    if (user.value === undefined) return err(apiError('missing_parameter', 'a user_* parameter is required'))
    userId = user.value.id
  }
  return ok({
    domain: domain.name.toLowerCase(),
    userId,
    appName: q.appName,
    forced: q.forced,
    credential,
    readOnly: q.readOnly,
    channelLimit: channelLimitShown(q.fullEvents, domain),
  })
}
