/**
 * Phone numbers as the API takes them (DID, called_number, calling_number, ani): an optional
 * + then 2 to 32 digits, * or #, the same rule the configuration enforces on the numbers it
 * holds. Whether the domain may present a number is the directory's to say
 * (calling-number.ts), after the parse.
 */
import { PSTN_RE } from '../../config/schema.js'
import { strictString } from './text.js'

export const PSTN_RULE = 'must be a PSTN number: optional + then 2-32 digits, * or #'

/** PSTN_RE with the length bounds of isPstnNumber (config/schema.ts), as schema checks. */
export const pstnNumberSchema = strictString().min(2, PSTN_RULE).max(32, PSTN_RULE).regex(PSTN_RE, PSTN_RULE)

/** A number the call presents: a PSTN number that must be one of the domain's calling_numbers. */
export const callingNumberSchema = pstnNumberSchema.describe(
  "The number presented to the called party: a PSTN number (optional + then 2-32 digits, * or #) among the domain's calling_numbers.",
)
