/**
 * The body of POST {prefix}/call_group, the single source of its rules. Fields are declared in
 * the order their rules are heard (schema/parse.ts); the group the identifiers name, the
 * destination and whether the group allows the strategy are decided after the parse, in operation.ts.
 */
import { z } from 'zod'
import { GROUP_STRATEGIES } from '../../../config/schema.js'
import { GROUP_KEYS } from '../../../directory/directory.js'
import { anyOfRequired, groupIdentifiers, optionalFields, requireOneOf } from '../../schema/identifiers.js'
import { destinationSchema } from '../../schema/party.js'
import { timeoutSchema } from '../../schema/scalars.js'
import { callingNameSchema } from '../../schema/text.js'
import { callbackUrlSchema } from '../../schema/url.js'
import { recordingFields } from '../../schema/recording.js'
import { callGuardFields } from '../../schema/call-guards.js'
import { statusFields } from '../../schema/status.js'
import { waitFields } from '../../schema/waiting.js'
import { requestBody } from '../../schema/request.js'

const STRATEGY_RULE = `must be one of ${GROUP_STRATEGIES.join(', ')}`

export const callGroupSchema = requestBody({
  ...optionalFields(groupIdentifiers),
  destination: destinationSchema(true).describe(
    'What the answering member is connected to: a user, group or extension (name, extension or DID), a PSTN number (optionally after an end_user prefix {key=value,...}), or the object {called_number, calling_number?, end_user?}.',
  ),
  answer_timeout: timeoutSchema.optional().describe("Seconds the whole hunt (ring_all: the ring) may take: 1 to 3600, a number or a string of digits; the group's answer_timeout when absent."),
  member_answer_timeout: timeoutSchema
    .optional()
    .describe("Seconds each member has to answer in a hunt (ring_all has no turns and does not use it): 1 to 3600, a number or a string of digits; the group's member_answer_timeout when absent."),
  strategy: z
    .enum(GROUP_STRATEGIES, STRATEGY_RULE)
    .optional()
    .describe(
      "How the members are rung: hunt (one member at a time, in the group's order) or ring_all (every registered terminal of every member at once, in one originate; the first to answer wins, member_answer_timeout does not apply). The group's own strategy when absent; one the group does not list in its strategies is refused.",
    ),
  calling_name: callingNameSchema.optional(),
  callback_url: callbackUrlSchema.optional(),
  ...recordingFields,
  ...callGuardFields,
  ...statusFields,
  ...waitFields,
})
  .superRefine(requireOneOf(GROUP_KEYS))
  .meta(anyOfRequired(GROUP_KEYS))
  .describe(
    `Rings the members of one group (one at a time, or all at once with strategy ring_all), then connects the answering member to the destination. At least one of ${GROUP_KEYS.join(', ')} is required; several must name the same group.`,
  )
