/**
 * The two recording fields every operation takes (issue 28; docs/recording.md "Policy"):
 * `record` asks for (or against) a recording, `recording_callback_url` says where the finished
 * recording's record goes. The URL follows callback_url's rules to the letter (the same schema,
 * and the same address check at request time, api/schema/url.ts callbackUrlRefusal).
 */
import { booleanSchema } from './scalars.js'
import { callbackUrlSchema, MAX_URL_LENGTH } from './url.js'

export const recordingFields = {
  record: booleanSchema
    .optional()
    .describe(
      'Record the call: true or false (or "true"/"false"). Honoured where the recording mode that applies (the group\'s for a call made for a group, else the user\'s, else the domain\'s) is on_request or always; refused (recording_not_allowed) where it is never, and false is refused where it is always. Absent: recorded only where the mode is always.',
    ),
  recording_callback_url: callbackUrlSchema
    .optional()
    .describe(
      `Where the finished recording's record is POSTed (signed and retried like the result callback), instead of the domain's recording.callback_url: an absolute http or https URL with a host, at most ${MAX_URL_LENGTH} characters, under callback_url's rules (a host outside callbacks.allow is refused).`,
    ),
}
