/**
 * The rules of the recordings routes (issue 28 item 4; docs/recording.md "API"), the single
 * source of the OpenAPI document's description of them (api/openapi/recordings.ts): the list's
 * query, and the record as the API shows it (snake_case, like every reply of the API).
 */
import { z } from 'zod'

const MAX_PAGE = 100
export const DEFAULT_PAGE = 20
const LIMIT_RULE = `must be a whole number from 1 to ${MAX_PAGE}`

/** `GET {prefix}/recordings?limit=&after=`: query values are strings; a repeated one is an array, refused. */
export const listQuerySchema = z
  .strictObject({
    limit: z
      .string(LIMIT_RULE)
      .regex(/^0*(?:[1-9][0-9]?|100)$/, LIMIT_RULE)
      .max(8, LIMIT_RULE)
      .transform(Number)
      .optional()
      .describe(`Records per page: 1 to ${MAX_PAGE}; ${DEFAULT_PAGE} when absent.`),
    after: z
      .string('must be the "next" of an earlier page')
      .max(64, 'must be the "next" of an earlier page')
      .optional()
      .describe('The `next` of the previous page: the records after it, newest first.'),
  })
  .describe('A page of the domain\'s recordings, newest first.')

export { viewOf, type RecordingView } from '../../recording/view.js'
