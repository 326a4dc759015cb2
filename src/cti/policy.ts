/**
 * Least privilege for browser (ticket) connections (docs/cti.md "Ticket policy"). A ticket from
 * gen_ws_ticket ends up in a web page: whatever the page may do, any script on it may do. So a
 * ticket connection may act only on its own user's calls and transfer only inside its domain;
 * a connection authenticated with the domain's API token (user-scoped or full_events) keeps
 * every power of the token, which could place the same calls through the API anyway.
 *
 * The rules, applied after visibility (a channel the connection may not see stays
 * `channel_not_found`, so nothing is learnt about it):
 * - A ticket may act on a channel that is its user's own terminal leg, or a leg with no user of
 *   its own (a PSTN or IVR party) connected to its user's leg: the caller an agent transfers.
 *   Another user's terminal leg, even one bridged to the ticket's user, is `permission_denied`.
 * - A ticket transfers to users, groups and extensions of its own domain (the destination is
 *   resolved in that domain's directory only); a PSTN number needs the domain privilege
 *   CTI_PSTN_TRANSFER_ALLOWED, else `permission_denied`.
 * - A `read_only=true` connection commands nothing: every command is `permission_denied`, before
 *   any channel is looked up. This is what lets a ticket see every channel of its domain
 *   (`full_events=true`, a "monitor ticket": the live calls page, a wallboard): the page can
 *   observe the domain's calls but cannot hang up, park or transfer any of them.
 * - Only a connection that sees every channel of its domain (full_events) is told the domain's
 *   channel_limit: it can count the live channels itself, and the limit is all it needs to show
 *   them against it. A user-scoped connection is not told (it sees only its user's calls).
 */
import type { ChannelRecord } from '../channels/index.js'
import type { DomainDirectory } from '../directory/directory.js'
import type { Destination } from '../origination/plan.js'
import { err, ok, type Result } from '../util/result.js'
import type { CtiError } from './protocol.js'

/** How the connection was authenticated: an API token (HTTP Basic) or a one-time ticket. */
export type Credential = 'token' | 'ticket'

const PSTN_TRANSFER_PRIVILEGE = 'CTI_PSTN_TRANSFER_ALLOWED'

const denied = (description: string): CtiError => ({ id: 'permission_denied', description })

/** Whether a connection may send commands at all: a read-only one may not. */
export function mayCommand(readOnly: boolean): Result<void, CtiError> {
  return readOnly ? err(denied('this connection is read-only (read_only=true): it observes channels and commands none')) : ok(undefined)
}

/** The channel_limit a connection is told in its initial_info: only one that sees the whole domain is. */
export const channelLimitShown = (fullEvents: boolean, domain: DomainDirectory): number | null =>
  fullEvents ? domain.config.channel_limit : null

/** Who sends a command: the connection's domain and user (undefined: full_events), and how it authenticated. */
export interface CommandSource {
  readonly domain: string
  readonly userId: string | undefined
  readonly credential: Credential
  /** read_only=true: every command is refused (mayCommand). */
  readonly readOnly: boolean
}

/**
 * Whether a connection of `userId` with this credential may act on a channel it can see: a
 * record of this box's model, or a peer's channel (its own user, as peers.ts shares it).
 */
export function mayActOn(ch: Pick<ChannelRecord, 'userId'>, credential: Credential, userId: string | undefined): Result<void, CtiError> {
  if (credential === 'token') return ok(undefined)
  if (ch.userId === undefined || ch.userId === userId) return ok(undefined)
  return err(denied("a ticket connection may act only on its own user's legs and the legs connected to them that belong to no other user"))
}

/** Whether a connection with this credential may transfer to this (resolved) destination. */
export function mayTransferTo(destination: Destination, credential: Credential, domain: DomainDirectory): Result<void, CtiError> {
  if (credential === 'token') return ok(undefined)
  switch (destination.kind) {
    case 'user':
    case 'group':
    case 'extension':
      return ok(undefined)
    case 'pstn':
      return domain.hasPrivilege(PSTN_TRANSFER_PRIVILEGE)
        ? ok(undefined)
        : err(denied(`destination: a ticket connection may transfer to a PSTN number only when the domain has the privilege ${PSTN_TRANSFER_PRIVILEGE}`))
    default:
      return err(denied('destination: a ticket connection may transfer only to users, groups and extensions of its domain'))
  }
}
