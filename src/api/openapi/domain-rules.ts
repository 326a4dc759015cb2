/**
 * The rules of each operation that no schema can say, because they depend on the domain (its
 * directory, privileges, calling numbers, registrations, channels) or on the configuration
 * (issue 26 item 3). The document appends them to each operation's description, so a client
 * knows that a body matching its schema is refused only for one of these. test/openapi/'s
 * property test lists the same refusals as the only ones a schema-valid body may get.
 */
import type { Operation } from '../../origination/plan.js'

const USER = "the user_* identifiers must name one user of the domain (`user_not_found`; `ambiguous_user` when they name different users, or a label several users share)"
const GROUP = 'the group_* identifiers must name one group of the domain (`group_not_found`; `ambiguous_group` likewise)'
const DESTINATION =
  'a destination name or number must name a user, group or extension of the domain, or be a PSTN number (`destination_not_found`); with end_user details (prefix or object form) it must be a number the domain does not claim (`invalid_parameter`)'
const CALLING_NUMBER = "a calling_number must be one of the domain's calling_numbers (`invalid_parameter`)"
const CALLBACK =
  'the host of callback_url (and of status_callback_url) must not be an address outside `callbacks.allow` (private, loopback, link-local...) nor a localhost name (`invalid_parameter`); a host name is checked when the callback is delivered'
const RECORDING =
  "record must agree with the recording mode that applies (the group's for a call made for a group, else the originating user's, else the domain's): true is refused where it is never, false where it is always (`recording_not_allowed`); recording_callback_url's host follows callback_url's rule (`invalid_parameter`)"
const CHANNELS =
  "the channels the call may create must fit the domain's channel_limit, at once or within wait_ms (`channel_limit_reached`, also when limits.max_waiting requests already wait); wait_ms must be at most the domain's limits.max_wait_ms and time_limit at most its max_call_seconds (`invalid_parameter`)"

/** @internal Exported for tests: test/openapi checks every operation has its rules. */
export const DOMAIN_RULES: Readonly<Record<Operation | 'gen_ws_ticket', readonly string[]>> = {
  call_user: [
    USER,
    'the user must have a registered terminal (`user_not_registered`)',
    DESTINATION,
    CALLING_NUMBER,
    `${GROUP}; group_resolver must find a group of the user (\`group_not_found\`), the same as group_* (\`ambiguous_group\`)`,
    CALLBACK,
    RECORDING,
    CHANNELS,
  ],
  call_group: [
    GROUP,
    "strategy must be one the group's configuration lists in its strategies (only its own strategy when it lists none) (`invalid_parameter`)",
    'a member of the group must have a registered terminal (`no_member_available`)',
    DESTINATION,
    CALLING_NUMBER,
    CALLBACK,
    RECORDING,
    CHANNELS,
  ],
  call_external: [
    "target's calling_number must be one of the domain's calling_numbers (`invalid_parameter`)",
    'a destination name or number must name a user, group or extension of the domain (`destination_not_found`); a PSTN number is refused (`destination_not_allowed`)',
    'xml_url: needs the domain privilege ON_THE_FLY_IVR_ALLOWED (`privilege_required`); an inline document must be canonical base64 of a valid IVR document (`invalid_xml`)',
    CALLBACK,
    RECORDING,
    CHANNELS,
  ],
  initiate_call: [
    "user_name (when pstn_number is absent) must name a user of the domain with a registered terminal (`user_not_found`, `user_not_registered`)",
    DESTINATION,
    "ani must be one of the domain's calling_numbers (`invalid_parameter`)",
    'group_name must name a group of the domain (`group_not_found`)',
    RECORDING,
    CHANNELS,
  ],
  gen_ws_ticket: ['the user the URI names must exist in the domain (`user_not_found`, `ambiguous_user`)'],
}

/** The paragraph appended to an operation's description. */
export function domainRulesText(operation: Operation | 'gen_ws_ticket'): string {
  return `\n\nA body that matches the schema is refused only when the domain says so:\n${DOMAIN_RULES[operation].map((r) => `- ${r}`).join('\n')}`
}
