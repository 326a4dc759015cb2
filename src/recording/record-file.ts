/**
 * The sidecar record `<id>.json` on disk: written atomically (a temporary file in the same
 * folder, flushed, then renamed over the record, so a crash leaves the old record or the new one,
 * never half of one), and read back checked field by field (the folder is read at every start:
 * a damaged file must not become a record with a path-bearing id).
 */
import { randomBytes } from 'node:crypto'
import { open, readFile, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { confinedPath } from '../util/confined-path.js'
import { err, ok, type Result } from '../util/result.js'
import { isRecordingId } from './id.js'
import type { RecordingRecord, RecordingStatus } from './types.js'

/** Leftovers of a write cut short end with this (the sweep removes old ones). */
export const TEMP_SUFFIX = '.tmp'

const STATUSES: readonly RecordingStatus[] = ['recording', 'completed', 'failed']
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/** The record a parsed JSON value is, or why not. */
function recordOf(value: unknown, expectedId: string, expectedDomain: string): Result<RecordingRecord, string> {
  if (typeof value !== 'object' || value === null) return err('not an object')
  const r = value as Record<string, unknown>
  if (r['id'] !== expectedId || typeof r['id'] !== 'string' || !isRecordingId(r['id'])) return err('id does not match its file name')
  if (r['domain'] !== expectedDomain) return err('domain does not match its folder')
  if (typeof r['requestId'] !== 'string' || r['requestId'].length > 128) return err('bad requestId')
  if (!Array.isArray(r['legs']) || r['legs'].length > 64 || !r['legs'].every((l) => typeof l === 'string' && l.length <= 64)) return err('bad legs')
  if (typeof r['startedAt'] !== 'string' || Number.isNaN(Date.parse(r['startedAt']))) return err('bad startedAt')
  if (r['durationMs'] !== undefined && !isCount(r['durationMs'])) return err('bad durationMs')
  if (!isCount(r['bytes'])) return err('bad bytes')
  if (r['format'] !== 'wav') return err('bad format')
  if (!STATUSES.includes(r['status'] as RecordingStatus)) return err('bad status')
  if (r['reason'] !== undefined && typeof r['reason'] !== 'string') return err('bad reason')
  if (r['retentionDays'] !== undefined && !isCount(r['retentionDays'])) return err('bad retentionDays')
  return ok({
    id: r['id'],
    requestId: r['requestId'],
    domain: r['domain'],
    legs: r['legs'] as string[],
    startedAt: r['startedAt'],
    ...(r['durationMs'] !== undefined ? { durationMs: r['durationMs'] } : {}),
    bytes: r['bytes'],
    format: 'wav',
    status: r['status'] as RecordingStatus,
    ...(r['reason'] !== undefined ? { reason: r['reason'] as string } : {}),
    ...(r['retentionDays'] !== undefined ? { retentionDays: r['retentionDays'] } : {}),
  })
}

/** Reads `path` (a confined path) as the record of `id` in `domain`. */
export async function readRecord(path: string, id: string, domain: string): Promise<Result<RecordingRecord, string>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    return err(`cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
  }
  try {
    return recordOf(JSON.parse(text), id, domain)
  } catch {
    return err('not JSON')
  }
}

/** Writes `record` to `path` (a confined path) atomically: temporary file, fsync, rename. */
export async function writeRecord(path: string, record: RecordingRecord): Promise<Result<void, string>> {
  const folder = dirname(path)
  const temp = confinedPath(folder, `${record.id}.json.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`)
  if (!temp.ok) return temp
  try {
    const handle = await open(temp.value, 'wx', 0o640)
    try {
      await handle.writeFile(`${JSON.stringify(record)}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp.value, path)
    return ok(undefined)
  } catch (e) {
    await rm(temp.value, { force: true }).catch(() => undefined)
    return err(`cannot write ${join(folder, `${record.id}.json`)}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
  }
}
