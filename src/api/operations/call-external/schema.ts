/**
 * The body of POST {prefix}/call_external, the single source of its rules. Fields are declared
 * in the order their rules are heard (schema/parse.ts); calling_number membership and the
 * destination are resolved after the parse, in operation.ts.
 */
import { pstnPartySchema, destinationSchema } from '../../schema/party.js'
import { timeoutSchema } from '../../schema/scalars.js'
import { callbackUrlSchema } from '../../schema/url.js'
import { recordingFields } from '../../schema/recording.js'
import { callGuardFields } from '../../schema/call-guards.js'
import { statusFields } from '../../schema/status.js'
import { waitFields } from '../../schema/waiting.js'
import { requestBody } from '../../schema/request.js'

export const callExternalSchema = requestBody({
  target: pstnPartySchema(true).describe(
    'The external party rung through the domain\'s gateway: a PSTN number (optional + then 2-32 digits, * or #), optionally after an end_user prefix {key=value,...} whose values are percent-encoded, or the object {called_number, calling_number?, end_user?}.',
  ),
  destination: destinationSchema(false, { xmlUrl: true }).describe(
    'What the answered target is connected to, internal only: a user, group or extension (name, extension or DID), or xml_url:<http/https URLs, comma-separated fallbacks> / xml_url:inline_xml://<base64 IVR document> (needs the domain privilege ON_THE_FLY_IVR_ALLOWED).',
  ),
  answer_timeout: timeoutSchema.optional().describe('Seconds the target has to answer: 1 to 3600, a number or a string of digits; 180 when absent.'),
  callback_url: callbackUrlSchema.optional(),
  ...recordingFields,
  ...callGuardFields,
  ...statusFields,
  ...waitFields,
})
  .describe('Calls an external party through the domain\'s gateway, then connects the answered leg to an internal destination or an IVR.')
