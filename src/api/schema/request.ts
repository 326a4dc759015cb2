/**
 * The frame of every request schema: a JSON object whose keys are all known (a typo must not
 * pass silently: unknown keys are refused by name, schema/parse.ts).
 */
import { z } from 'zod'

export const requestBody = <S extends z.core.$ZodLooseShape>(shape: S) =>
  z.strictObject(shape, { error: (iss) => (iss.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) })
