/**
 * Request bodies as JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), generated from the
 * zod schemas that parse them: REQUEST_SCHEMAS (api/operations/index.ts), described as clients
 * write them (`io: 'input'`). gen_ws_ticket's body is parsed by CTI's own checks (cti/index.ts:
 * only `uri`, required; cti/query.ts its form); ticketRequest describes those rules for the
 * document only, its pattern a subset of what they take (schema/forms.ts).
 */
import { z } from 'zod'
import type { Operation } from '../../origination/plan.js'
import { REQUEST_SCHEMAS } from '../operations/index.js'
import { wsCtiUriPattern } from '../schema/forms.js'
import type { JsonObject } from './json.js'
import { jsonSchemaOf } from './zod-json.js'

/** cti/query.ts MAX_URI_LENGTH. */
const MAX_TICKET_URI_LENGTH = 2048

const ticketRequest = (prefix: string) =>
  z
    .strictObject({
      uri: z
        .string()
        .min(1)
        .max(MAX_TICKET_URI_LENGTH)
        .meta({ pattern: wsCtiUriPattern(`${prefix}/ws_cti`) })
        .describe(
          `The ws_cti URI the ticket is for: path and query (\`${prefix}/ws_cti?app_name=crm&user_name=alice\`), or a whole ws://, wss://, http:// or https:// URL of which only the path and query count; without \`ticket\`; \`full_events=true\` only with \`read_only=true\`. The pattern lists app_name, then one of user_id, user_name, user_extension (then read_only), then forced; the daemon also takes the other user identifiers, any order and percent-encoded values. The user must exist (user_not_found).`,
        ),
    })
    .describe('Asks for a one-time ticket, valid for exactly this ws_cti URI, for cti.ticket_ttl_ms (default 10 s).')

/** `components.schemas` name of each operation's request body. */
export const requestSchemaName = (operation: Operation | 'gen_ws_ticket'): string =>
  `${operation
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Request`

/** `prefix`: the API's path prefix, which the ws_cti URI of gen_ws_ticket starts with. */
export function requestSchemas(prefix: string): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {}
  for (const [operation, schema] of Object.entries(REQUEST_SCHEMAS) as [Operation, z.ZodType][]) {
    out[requestSchemaName(operation)] = jsonSchemaOf(schema)
  }
  out[requestSchemaName('gen_ws_ticket')] = jsonSchemaOf(ticketRequest(prefix))
  return out
}

/** Whether the operation's request may carry callback_url (then the document lists its callback). */
export function hasCallbackUrl(schema: JsonObject): boolean {
  const props = schema['properties']
  return typeof props === 'object' && props !== null && !Array.isArray(props) && 'callback_url' in props
}
