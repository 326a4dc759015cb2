/**
 * The identity of the external party of a call (docs/interface.md "end_user"): given by the
 * API client, carried on the legs as one channel variable (commands.ts encodes it, the dialplan
 * and CTI decode it) and relayed to CTI panels. It lives here, below origination, CTI and
 * xml_curl, because the PBX layer is the lowest one that writes and reads it.
 */

export interface EndUser {
  readonly id?: string
  readonly name?: string
  readonly organization?: string
  readonly avatar?: string
  readonly prefecture?: string
}
export const END_USER_FIELDS = ['id', 'name', 'organization', 'avatar', 'prefecture'] as const
