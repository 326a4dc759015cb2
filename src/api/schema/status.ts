/**
 * The status-event fields every operation takes (issue 29 item 1; docs/events.md):
 * `status_callback_url`, where the call's status events go (callback_url's rules to the letter:
 * the same schema, and the same address check at request time, api/schema/url.ts
 * callbackUrlRefusal), and `status_events`, which of them (default: all).
 */
import { z } from 'zod'
import { STATUS_EVENTS } from '../../origination/plan.js'
import { callbackUrlSchema, MAX_URL_LENGTH } from './url.js'

const EVENTS_RULE = `must be a non-empty list of distinct events among ${STATUS_EVENTS.join(', ')}`

export const statusFields = {
  status_callback_url: callbackUrlSchema
    .optional()
    .describe(
      `Where the call's status events are POSTed, one per event per leg, in sequence (docs/events.md; signed and retried like the result callback): an absolute http or https URL with a host, at most ${MAX_URL_LENGTH} characters, under callback_url's rules (a host outside callbacks.allow is refused).`,
    ),
  status_events: z
    .array(z.enum(STATUS_EVENTS, EVENTS_RULE), EVENTS_RULE)
    .min(1, EVENTS_RULE)
    .max(STATUS_EVENTS.length, EVENTS_RULE)
    .refine((events) => new Set(events).size === events.length, EVENTS_RULE)
    .meta({ uniqueItems: true })
    .optional()
    .describe(`The status events wanted, among ${STATUS_EVENTS.join(', ')}, each once (default: all of them). Ignored without status_callback_url.`),
}
