/**
 * The spool file: results not delivered when the daemon stopped, delivered at the next start.
 *
 * JSON Lines, one delivery per line, so that a result arriving after the shutdown flush can
 * be appended without rewriting the file. A full rewrite goes through a temporary file and a
 * rename, so a crash mid-write leaves the previous file intact. Mode 0600: lines hold callback
 * URLs (possibly with credentials) and call results.
 */
import { appendFileSync, unlinkSync } from 'node:fs'
import { readFile, rename, unlink, writeFile } from 'node:fs/promises'
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

const toLines = (entries: readonly SpoolEntry[]): string => entries.map((e) => `${JSON.stringify(e)}\n`).join('')

/** Replaces the file with exactly these entries; no entries: the file is removed. */
export async function writeSpool(file: string, entries: readonly SpoolEntry[]): Promise<Result<void, string>> {
  try {
    if (entries.length === 0) {
      await unlink(file).catch((e: unknown) => {
        if (!isNoEnt(e)) throw e
      })
      return ok(undefined)
    }
    const tmp = `${file}.${process.pid}.tmp`
    await writeFile(tmp, toLines(entries), { mode: 0o600 })
    await rename(tmp, file)
    return ok(undefined)
  } catch (e) {
    return err(message(e))
  }
}

/** Synchronous on purpose: used after shutdown, when the process may exit right after. */
export function appendSpoolSync(file: string, entry: SpoolEntry): Result<void, string> {
  try {
    appendFileSync(file, toLines([entry]), { mode: 0o600 })
    return ok(undefined)
  } catch (e) {
    return err(message(e))
  }
}

/** Removes the file once everything read from it has been delivered (or finally failed). */
export function removeSpoolSync(file: string): Result<void, string> {
  try {
    unlinkSync(file)
    return ok(undefined)
  } catch (e) {
    return isNoEnt(e) ? ok(undefined) : err(message(e))
  }
}
