/**
 * The duration of a WAV file from its header (RIFF: the `fmt ` chunk's byte rate, the `data`
 * chunk's size), for a recording completed without a duration from the call path. Reads the
 * first 4 KiB only; anything it cannot make sense of gives undefined, never a guess.
 */
import { open } from 'node:fs/promises'

/** Bytes of a canonical PCM WAV header: a file no longer than this holds no audio. */
export const WAV_HEADER_BYTES = 44

const HEAD_BYTES = 4096

/** The duration the header announces (data bytes / byte rate), when the header says it. */
function wavDurationMs(head: Buffer, fileBytes: number): number | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return undefined
  let byteRate: number | undefined
  let offset = 12
  while (offset + 8 <= head.length) {
    const id = head.toString('latin1', offset, offset + 4)
    const size = head.readUInt32LE(offset + 4)
    const body = offset + 8
    if (id === 'fmt ' && body + 12 <= head.length) byteRate = head.readUInt32LE(body + 8)
    if (id === 'data') {
      if (byteRate === undefined || byteRate === 0) return undefined
      // A writer that was cut off (or streams) may leave the size unset: what is on disk counts.
      const dataBytes = size === 0 || size === 0xffffffff || body + size > fileBytes ? Math.max(0, fileBytes - body) : size
      return Math.round((dataBytes * 1000) / byteRate)
    }
    offset = body + size + (size % 2)
  }
  return undefined
}

/** wavDurationMs of a file; undefined when it cannot be read. */
export async function wavFileDurationMs(path: string, fileBytes: number): Promise<number | undefined> {
  let handle
  try {
    handle = await open(path, 'r')
    const head = Buffer.alloc(Math.min(HEAD_BYTES, fileBytes))
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    return wavDurationMs(head.subarray(0, bytesRead), fileBytes)
  } catch {
    return undefined
  } finally {
    await handle?.close()
  }
}
