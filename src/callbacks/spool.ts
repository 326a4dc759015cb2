/**
 * The spool file of earlier versions (`callbacks.spool_file`, deprecated): results not delivered
 * when such a daemon stopped. The journal (src/journal/) replaced it; this file only reads one
 * that an older version left, so that an upgrade loses none of its results (spool-import.ts
 * moves them into the journal). JSON Lines, one delivery per line.
 */
import { unlinkSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { err, ok, type Result } from '../util/result.js'

export const spoolEntrySchema = z.strictObject({
  v: z.literal(1),
  delivery_id: z.string().min(1).max(100),
  domain: z.string().min(1).max(253),
  url: z.string().min(1).max(8192),
  request_id: z.string().min(1).max(200),
  /** The exact body bytes sent (and signed) on every attempt. */
  body: z.string().min(1).max(65536),
  attempts: z.number().int().min(0).max(1000),
  /** Unix ms when the result was first handed over. */
  created_at: z.number().int().min(0),
})
export type SpoolEntry = z.infer<typeof spoolEntrySchema>

export interface SpoolRead {
  readonly entries: SpoolEntry[]
  /** Lines that could not be read back: the caller logs them in full so nothing vanishes. */
  readonly bad: string[]
}

const isNoEnt = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === 'ENOENT'
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

export async function readSpool(file: string): Promise<Result<SpoolRead, string>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    return isNoEnt(e) ? ok({ entries: [], bad: [] }) : err(message(e))
  }
  const entries: SpoolEntry[] = []
  const bad: string[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      bad.push(line)
      continue
    }
    const r = spoolEntrySchema.safeParse(parsed)
    if (r.success) entries.push(r.data)
    else bad.push(line)
  }
  return ok({ entries, bad })
}

/** Removes the file once its entries are durable in the journal. */
export function removeSpoolSync(file: string): Result<void, string> {
  try {
    unlinkSync(file)
    return ok(undefined)
  } catch (e) {
    return isNoEnt(e) ? ok(undefined) : err(message(e))
  }
}
