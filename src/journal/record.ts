/**
 * The journal's records on disk, and their framing.
 *
 * One record per line: `<crc32 as 8 hex digits> <JSON>\n`. JSON escapes every control character,
 * so a record never contains a newline and the file stays readable with `tail`/`grep`. The
 * checksum covers the JSON text: a line torn by a crash (no newline, or a partial write) or
 * damaged on disk fails it and is skipped, and the next line is read on its own, so one bad
 * record never hides the ones after it. Parsed records are validated again (zod): a line with a
 * valid checksum but an unknown shape (a future version) is reported, never half-applied.
 */
import { crc32 } from 'node:zlib'
import { z } from 'zod'

const id = z.string().min(1).max(200)
const ms = z.number().int().min(0)

const idempotencySchema = z.strictObject({
  key: z.string().min(1).max(1000),
  bodyDigest: z.string().min(1).max(200),
  reply: z.string().max(65536),
})

/** What an accepted request and an intent both say of the request (types.ts AcceptedRequest, OriginateIntent). */
const requestFields = {
  at: ms,
  requestId: id,
  domain: z.string().min(1).max(253),
  operation: z.string().min(1).max(50),
  uuids: z.array(z.string().min(1).max(100)).max(10000),
  callbackUrl: z.string().min(1).max(8192).optional(),
  answerDeadlineAt: ms,
}

const statusSubscriptionSchema = z.strictObject({ url: z.string().min(1).max(8192), events: z.array(z.string().min(1).max(20)).max(10) })

const acceptedSchema = z.strictObject({ k: z.literal('accepted'), ...requestFields, idempotency: idempotencySchema.optional(), status: statusSubscriptionSchema.optional() })

/** Every leg of the request told its `completed` (types.ts Journal.followed). */
const followedSchema = z.strictObject({ k: z.literal('followed'), at: ms, requestId: id })

/** A request's status progress as a compaction writes it (types.ts StatusFollowing). */
const followingSchema = z.strictObject({
  k: z.literal('following'),
  at: ms,
  requestId: id,
  domain: z.string().min(1).max(253),
  status: statusSubscriptionSchema,
  origin: z.array(z.string().min(1).max(100)).max(10000),
  sequence: z.number().int().min(0),
  sent: z.array(z.string().min(1).max(130)).max(100_000),
})

const endedSchema = z.strictObject({ k: z.literal('ended'), at: ms, requestId: id })

/** Written before a request's first originate (types.ts OriginateIntent). */
const intendedSchema = z.strictObject({ k: z.literal('intended'), ...requestFields, idempotency: idempotencySchema.omit({ reply: true }).optional() })

/** The intended request was refused (nothing placed), or recovery found nothing of it. */
const unplacedSchema = z.strictObject({ k: z.literal('unplaced'), at: ms, requestId: id })

const resultSchema = z.strictObject({
  k: z.literal('result'),
  at: ms,
  deliveryId: id,
  requestId: id,
  domain: z.string().min(1).max(253),
  url: z.string().min(1).max(8192),
  body: z.string().min(1).max(65536),
  createdAt: ms,
})

const noticeSchema = resultSchema.extend({
  k: z.literal('notice'),
  notice: z.strictObject({
    kind: z.enum(['status', 'recording', 'ticket']),
    signer: z.string().min(1).max(300).optional(),
    order: z.strictObject({ key: id, seq: z.number().int().min(0) }).optional(),
    status: z.strictObject({ uuid: z.string().min(1).max(100), event: z.string().min(1).max(20), sequence: z.number().int().min(1) }).optional(),
  }),
})

const attemptedSchema = z.strictObject({
  k: z.literal('attempted'),
  at: ms,
  deliveryId: id,
  attempts: z.number().int().min(0),
  nextAttemptAt: ms,
  giveUpAt: ms,
  receiverAsked: z.boolean().optional(),
})

const ackedSchema = z.strictObject({ k: z.literal('acked'), at: ms, deliveryId: id })

const deadSchema = z.strictObject({
  k: z.literal('dead'),
  at: ms,
  deliveryId: id,
  reason: z.string().max(2000),
  attempts: z.number().int().min(0),
})

const revivedSchema = z.strictObject({ k: z.literal('revived'), at: ms, deliveryId: id, giveUpAt: ms })

export const recordSchema = z.discriminatedUnion('k', [
  acceptedSchema,
  endedSchema,
  intendedSchema,
  unplacedSchema,
  resultSchema,
  noticeSchema,
  attemptedSchema,
  ackedSchema,
  deadSchema,
  revivedSchema,
  followedSchema,
  followingSchema,
])

export type JournalRecord = z.infer<typeof recordSchema>

const hex8 = (n: number): string => n.toString(16).padStart(8, '0')
const HEX8 = /^[0-9a-f]{8}$/

/** One framed line, newline included. */
export function encodeRecord(r: JournalRecord): string {
  const json = JSON.stringify(r)
  return `${hex8(crc32(json))} ${json}\n`
}

/**
 * Why a line was not read back:
 * - torn: the file's last line without its newline (a crash in the middle of a write);
 * - checksum: the text does not match its checksum (damaged, or torn and followed by more);
 * - shape: the checksum holds but the record is not one this version knows.
 */
export type BadLine = { readonly kind: 'torn' | 'checksum' | 'shape'; readonly line: number; readonly text: string }

export interface DecodedFile {
  readonly records: JournalRecord[]
  readonly bad: BadLine[]
}

/** Reads every line of a segment's text; never throws. */
export function decodeRecords(text: string): DecodedFile {
  const records: JournalRecord[] = []
  const bad: BadLine[] = []
  const lines = text.split('\n')
  // The text after the last newline: empty for a file that ends cleanly.
  const tail = lines.pop() ?? ''
  lines.forEach((raw, i) => {
    if (raw === '') return
    const r = decodeLine(raw)
    if (r === undefined) bad.push({ kind: 'checksum', line: i + 1, text: raw })
    else if (r === 'shape') bad.push({ kind: 'shape', line: i + 1, text: raw })
    else records.push(r)
  })
  if (tail !== '') bad.push({ kind: 'torn', line: lines.length + 1, text: tail })
  return { records, bad }
}

function decodeLine(raw: string): JournalRecord | 'shape' | undefined {
  // Sliced, not matched with `.`: JSON leaves U+2028/U+2029 unescaped, and `.` stops at them.
  const sum = raw.slice(0, 8)
  const json = raw.slice(9)
  // Compared as the text the encoder wrote (lower-case hex), not as a number: parseInt would take
  // "+1a2b3c4" or " 1a2b3c4" too.
  if (raw[8] !== ' ' || !HEX8.test(sum) || hex8(crc32(json)) !== sum) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return 'shape'
  }
  const r = recordSchema.safeParse(parsed)
  return r.success ? r.data : 'shape'
}
