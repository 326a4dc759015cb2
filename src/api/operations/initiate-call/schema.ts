/**
 * The body of POST {prefix}/initiate_call (deprecated), the single source of its rules. Fields
 * are declared in the order their rules are heard (schema/parse.ts); the user, the destination,
 * ani membership and the group are resolved after the parse, in operation.ts.
 */
import { anyOfRequired, groupIdentifiers, requireOneOf, userIdentifiers } from '../../schema/identifiers.js'
import { callingNumberSchema } from '../../schema/numbers.js'
import { destinationSchema, pstnPartySchema } from '../../schema/party.js'
import { recordingFields } from '../../schema/recording.js'
import { callGuardFields } from '../../schema/call-guards.js'
import { statusFields } from '../../schema/status.js'
import { waitFields } from '../../schema/waiting.js'
import { requestBody } from '../../schema/request.js'

const ORIGINATORS = ['user_name', 'pstn_number'] as const

export const initiateCallSchema = requestBody({
  user_name: userIdentifiers.user_name
    .optional()
    .describe('The user whose terminals ring first (its name, case-insensitive). With pstn_number it is only checked for shape: legacy clients send both.'),
  pstn_number: pstnPartySchema(false)
    .optional()
    .describe('A PSTN number rung first through the domain\'s gateway instead of a user, optionally after an end_user prefix {key=value,...}; it wins over user_name.'),
  destination: destinationSchema(false).describe(
    'What the answered leg is connected to: a user, group or extension (name, extension or DID), or a PSTN number (optionally after an end_user prefix {key=value,...}).',
  ),
  ani: callingNumberSchema.optional().describe("The number presented on every PSTN leg of the call: one of the domain's calling_numbers."),
  group_name: groupIdentifiers.group_name.optional().describe('Gives the call the context of this group (its name, case-insensitive).'),
  ...recordingFields,
  ...callGuardFields,
  ...statusFields,
  ...waitFields,
})
  .superRefine(requireOneOf(ORIGINATORS))
  .meta(anyOfRequired(ORIGINATORS))
  .describe('Deprecated: calls a user (user_name) or a PSTN number (pstn_number), then connects the answered leg to the destination. One of user_name and pstn_number is required.')
