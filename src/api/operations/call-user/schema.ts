/**
 * The body of POST {prefix}/call_user, the single source of its rules. Fields are declared in
 * the order their rules are heard (schema/parse.ts); what needs the directory (which user and
 * group the identifiers name, the destination, calling_number membership) is resolved after
 * the parse, in operation.ts.
 */
import { z } from 'zod'
import { USER_KEYS } from '../../../directory/directory.js'
import { anyOfRequired, groupIdentifiers, optionalFields, requireOneOf, userIdentifiers } from '../../schema/identifiers.js'
import { destinationSchema } from '../../schema/party.js'
import { booleanSchema, timeoutSchema } from '../../schema/scalars.js'
import { callingNameSchema } from '../../schema/text.js'
import { callbackUrlSchema } from '../../schema/url.js'
import { recordingFields } from '../../schema/recording.js'
import { callGuardFields } from '../../schema/call-guards.js'
import { statusFields } from '../../schema/status.js'
import { waitFields } from '../../schema/waiting.js'
import { requestBody } from '../../schema/request.js'

const GROUP_RESOLVERS = ['*', 'any:CALL_CENTER'] as const

export const callUserSchema = requestBody({
  ...optionalFields(userIdentifiers),
  destination: destinationSchema(true).describe(
    'What the answered user is connected to: a user, group or extension (name, extension or DID), a PSTN number (optionally after an end_user prefix {key=value,...}), or the object {called_number, calling_number?, end_user?}.',
  ),
  answer_timeout: timeoutSchema.optional().describe('Seconds the user has to answer: 1 to 3600, a number or a string of digits; 180 when absent.'),
  callback_url: callbackUrlSchema.optional(),
  auto_answer: booleanSchema.optional().describe('Ask the terminals to answer by themselves: true or false (or "true"/"false"); false when absent.'),
  calling_name: callingNameSchema.optional(),
  ...optionalFields(groupIdentifiers),
  group_resolver: z
    .enum(GROUP_RESOLVERS, 'must be "*" or "any:CALL_CENTER"')
    .optional()
    .describe('Gives the call the group context of one of the user\'s groups: "*" the first, "any:CALL_CENTER" the first call-center group; with group_* it must name the same group.'),
  ...recordingFields,
  ...callGuardFields,
  ...statusFields,
  ...waitFields,
})
  .superRefine(requireOneOf(USER_KEYS))
  .meta(anyOfRequired(USER_KEYS))
  .describe(`Rings every terminal of one user, then connects the answered leg to the destination. At least one of ${USER_KEYS.join(', ')} is required; several must name the same user.`)

export type CallUserBody = z.output<typeof callUserSchema>
