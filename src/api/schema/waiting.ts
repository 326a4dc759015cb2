/**
 * `wait_ms`, which every operation takes (issue 31 item 2; docs/api.md "Waiting for a channel"): how
 * long the request may wait for its channels when its domain is at its channel_limit, instead of
 * being refused at once. The domain's limits.max_wait_ms bounds it (api/waiting.ts).
 */
import { z } from 'zod'

const MAX_WAIT_MS = 30_000
const WAIT_RULE = `must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}`
/** 0 to 30000 as a string of digits, leading zeros allowed (no lookahead: RE2-safe, as the other timeouts). */
const WAIT_DIGITS_RE = /^0*(?:[0-9]{1,4}|[12][0-9]{4}|30000)$/

export const waitFields = {
  wait_ms: z
    .union(
      [z.int(WAIT_RULE).min(0, WAIT_RULE).max(MAX_WAIT_MS, WAIT_RULE), z.string(WAIT_RULE).max(12, WAIT_RULE).regex(WAIT_DIGITS_RE, WAIT_RULE)],
      { error: WAIT_RULE },
    )
    .transform(Number)
    .optional()
    .describe(
      `Milliseconds the request may wait for its channels when the domain is at its channel_limit: 0 to ${MAX_WAIT_MS} (default 0: refused at once, channel_limit_reached). Waiting requests are served first come, first served; after wait_ms the answer is channel_limit_reached with nothing placed. At most the domain's limits.max_wait_ms (else invalid_parameter, naming it).`,
    ),
}
