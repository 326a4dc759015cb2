/**
 * Reading FreeSWITCH's reply texts (the inverse of pbx/commands.ts). Formats are those of the
 * captures in test/fixtures/freeswitch/esl (file names cited per function).
 */
import { checkContact } from './commands.js'
import { err, ok, type Result } from '../util/result.js'

export type JobBody = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string }

/**
 * A BACKGROUND_JOB body: `+OK <uuid>\n` or `-ERR <CAUSE>\n` (sessions 06, 10-17 in
 * test/fixtures/freeswitch/esl/). Anything else (status text, sofia_contact output) is returned as
 * ok text, trimmed of the final newline.
 */
export function parseJobBody(body: string): JobBody {
  const text = body.replace(/\r?\n$/, '')
  if (text.startsWith('-ERR')) return { ok: false, reason: text.slice(4).trim() }
  if (text.startsWith('+OK')) return { ok: true, text: text.slice(3).trim() }
  return { ok: true, text }
}

export type ContactsReply =
  | { readonly kind: 'contacts'; readonly contacts: readonly string[]; readonly refused: readonly string[] }
  | { readonly kind: 'not_registered' }

/**
 * sofia_contact output: a comma list of dial strings, or `error/user_not_registered`
 * (test/fixtures/freeswitch/esl/01-session-basics.txt and 16-sofia-contact-not-registered.txt; no
 * trailing newline). Contacts outside the safe alphabet (a phone chooses its own Contact header)
 * are refused and reported, never dialled.
 */
export function parseSofiaContacts(body: string): ContactsReply {
  const text = body.trim()
  if (text === '' || text.startsWith('error/') || text.startsWith('-ERR')) return { kind: 'not_registered' }
  const contacts: string[] = []
  const refused: string[] = []
  for (const part of text.split(',')) {
    const c = part.trim()
    if (c === '') continue
    if (checkContact(c).ok) contacts.push(c)
    else refused.push(c)
  }
  return contacts.length === 0 && refused.length === 0 ? { kind: 'not_registered' } : { kind: 'contacts', contacts, refused }
}

/**
 * One row of `show channels as json` (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt):
 * every value is a string.
 */
export interface ChannelRow {
  readonly uuid: string
  readonly direction?: string
  readonly state?: string
  /** RINGING / EARLY / ACTIVE / HELD / HANGUP ... (ACTIVE or HELD = answered). */
  readonly callstate?: string
  readonly presence_id?: string
  readonly context?: string
  readonly dest?: string
  readonly name?: string
  readonly [key: string]: string | undefined
}

/**
 * `{"row_count": 0}\n` when idle, `{"row_count":1,"rows":[...]}` otherwise
 * (test/fixtures/freeswitch/esl/03-show-channels-live-call.txt).
 */
export function parseShowChannels(body: string): Result<ChannelRow[], string> {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return err(`not JSON: ${body.slice(0, 80)}`)
  }
  if (typeof parsed !== 'object' || parsed === null) return err('not a JSON object')
  const rows = (parsed as { rows?: unknown }).rows
  if (rows === undefined) return ok([])
  if (!Array.isArray(rows)) return err('rows is not an array')
  const out: ChannelRow[] = []
  for (const r of rows) {
    if (typeof r !== 'object' || r === null) continue
    const row: Record<string, string> = {}
    for (const [k, v] of Object.entries(r as Record<string, unknown>)) if (typeof v === 'string') row[k] = v
    if (typeof row.uuid === 'string' && row.uuid !== '') out.push(row as ChannelRow)
  }
  return ok(out)
}

/**
 * Whether a `show channels` row is an answered channel (callstate ACTIVE or HELD).
 * @internal Exported for tests: test/pbx feeds it captured rows.
 */
export const rowAnswered = (row: ChannelRow): boolean => row.callstate === 'ACTIVE' || row.callstate === 'HELD'

/**
 * `fsctl sps`'s answer, `+OK sessions per second: 30\n`
 * (test/fixtures/freeswitch/esl/35-sessions-per-second.txt): the rate; undefined for any other
 * text (an older or altered FreeSWITCH).
 */
export function parseSessionsPerSecond(reply: string): number | undefined {
  const m = /^\+OK sessions per second: (\d+)\n?$/.exec(reply)
  return m?.[1] === undefined ? undefined : Number(m[1])
}
