/**
 * The WAV file a simulated recording writes, laid out as FreeSWITCH 1.10.12's writes it
 * (mod_sndfile, libsndfile; test/fixtures/freeswitch/esl/28-record-session-bridge.txt): the
 * canonical 44-byte header (RIFF, a 16-byte `fmt ` chunk of 16-bit PCM, `data`), then the
 * interleaved samples. The simulator has no media, so the audio is a tone per party (a
 * recording is never silence): left 440 Hz, right 620 Hz, each at about a quarter of full scale.
 */
import type { FileHandle } from 'node:fs/promises'

export const WAV_HEADER_BYTES = 44
export const SAMPLE_RATE = 8000
/** FreeSWITCH writes whole 20 ms frames (esl/28: record_samples 24640 = 154 x 160). */
export const FRAME_SAMPLES = 160

const TONES_HZ = [440, 620] as const
const AMPLITUDE = 8000
/** Samples generated per write: one second, so a long call never sits in memory whole. */
const CHUNK_SAMPLES = SAMPLE_RATE

/** The header of a 16-bit PCM file at 8000 Hz of `channels` holding `samples` samples per channel. */
export function wavHeader(channels: 1 | 2, samples: number): Buffer {
  const blockAlign = channels * 2
  const dataBytes = samples * blockAlign
  const b = Buffer.alloc(WAV_HEADER_BYTES)
  b.write('RIFF', 0, 'latin1')
  b.writeUInt32LE(36 + dataBytes, 4)
  b.write('WAVEfmt ', 8, 'latin1')
  b.writeUInt32LE(16, 16)
  b.writeUInt16LE(1, 20) // PCM
  b.writeUInt16LE(channels, 22)
  b.writeUInt32LE(SAMPLE_RATE, 24)
  b.writeUInt32LE(SAMPLE_RATE * blockAlign, 28)
  b.writeUInt16LE(blockAlign, 32)
  b.writeUInt16LE(16, 34)
  b.write('data', 36, 'latin1')
  b.writeUInt32LE(dataBytes, 40)
  return b
}

/** Samples `from` .. `from + count` of the tone, interleaved per channel. */
function toneChunk(channels: 1 | 2, from: number, count: number): Buffer {
  const b = Buffer.alloc(count * channels * 2)
  for (let i = 0; i < count; i++) {
    for (let c = 0; c < channels; c++) {
      const hz = TONES_HZ[c] ?? TONES_HZ[0]
      b.writeInt16LE(Math.round(AMPLITUDE * Math.sin((2 * Math.PI * hz * (from + i)) / SAMPLE_RATE)), (i * channels + c) * 2)
    }
  }
  return b
}

/** Writes `samples` samples of tone after the header, then the header with the final sizes; the file's size. */
export async function writeTone(file: FileHandle, channels: 1 | 2, samples: number): Promise<number> {
  let position = WAV_HEADER_BYTES
  for (let done = 0; done < samples; done += CHUNK_SAMPLES) {
    const chunk = toneChunk(channels, done, Math.min(CHUNK_SAMPLES, samples - done))
    await file.write(chunk, 0, chunk.length, position)
    position += chunk.length
  }
  await file.write(wavHeader(channels, samples), 0, WAV_HEADER_BYTES, 0)
  return position
}
