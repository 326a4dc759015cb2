/**
 * The journal's files: `segment-<10-digit seq>.log` in the journal folder, only ever appended
 * to, the highest seq being the one in use. A new segment is only ever born whole: its first
 * records (a snapshot of the live state) go to a temporary file, which is fsynced, renamed to its
 * final name, and the folder fsynced, so after a crash a segment is either absent or complete
 * up to what was appended after it (ext4/xfs: rename is atomic, the folder's fsync makes it
 * durable). A segment that cannot be trusted is renamed `<name>.corrupt-<unix ms>` and kept for
 * the operator; nothing here deletes data that was not rewritten first.
 */
import { constants } from 'node:fs'
import { open, readdir, readFile, rename, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { makeWritableFolder } from '../util/writable-folder.js'

const SEGMENT = /^segment-(\d{10})\.log$/

const segmentName = (seq: number): string => `segment-${String(seq).padStart(10, '0')}.log`

export interface SegmentFile {
  readonly seq: number
  readonly path: string
}

/**
 * Creates the folder (0700: records hold callback URLs, possibly with credentials) and lists its
 * segments, oldest first. Throws, naming the real reason, when the folder cannot be written.
 */
export async function listSegments(dir: string): Promise<SegmentFile[]> {
  const folder = await makeWritableFolder(dir, 0o700)
  if (!folder.ok) throw new Error(folder.error)
  const names = await readdir(dir)
  const out: SegmentFile[] = []
  for (const name of names) {
    const m = SEGMENT.exec(name)
    if (m?.[1] !== undefined) out.push({ seq: Number(m[1]), path: join(dir, name) })
    // A temporary file is a compaction a crash interrupted before its rename: never complete.
    else if (name.endsWith('.log.tmp')) await unlink(join(dir, name)).catch(() => undefined)
  }
  return out.sort((a, b) => a.seq - b.seq)
}

export const readSegment = (path: string): Promise<string> => readFile(path, 'utf8')

/** Makes a rename or an unlink in the folder durable. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * How a segment in use is opened: appended to, and every write durable when it returns
 * (O_DSYNC: the data, and the size that makes it readable, are on the disk, as after write +
 * fdatasync; open(2)). One call per batch instead of two: each of node's file calls is a trip to
 * libuv's thread pool and back, and the journal writes a batch for about every call placed
 * (docs/bench.md). No O_CREAT: the segment was made whole before (createSegment).
 */
const APPEND_DURABLY = constants.O_WRONLY | constants.O_APPEND | constants.O_DSYNC

/**
 * Writes `text` as segment `seq`, whole or not at all (see the top of this file), and opens it
 * for appending, each write durable when it returns. The caller removes the older segments
 * afterwards.
 */
export async function createSegment(dir: string, seq: number, text: string): Promise<{ handle: FileHandle; path: string }> {
  const path = join(dir, segmentName(seq))
  const tmp = `${path}.tmp`
  const fh = await open(tmp, 'w', 0o600)
  try {
    await fh.writeFile(text, 'utf8')
    await fh.sync()
  } finally {
    await fh.close()
  }
  await rename(tmp, path)
  await syncDir(dir)
  return { handle: await open(path, APPEND_DURABLY), path }
}

/**
 * Opens an existing segment for appending, each write durable when it returns, cut to its first
 * `keepBytes`: what follows is a torn last record (a crash in the middle of a write, whose caller
 * was never answered), and a record appended after it would join its line and fail its checksum.
 */
export async function reopenSegment(path: string, keepBytes: number): Promise<FileHandle> {
  const fh = await open(path, APPEND_DURABLY)
  try {
    const { size } = await fh.stat()
    if (size > keepBytes) {
      await fh.truncate(keepBytes)
      await fh.sync()
    }
    return fh
  } catch (e) {
    await fh.close().catch(() => undefined)
    throw e
  }
}

/** Renames an untrusted segment aside; returns the new path. */
export async function moveAside(path: string, nowMs: number): Promise<string> {
  const aside = `${path}.corrupt-${nowMs}`
  await rename(path, aside)
  return aside
}

export const removeSegment = (path: string): Promise<void> => unlink(path)
