/** What the real lane's recording checks read of a canonical 16-bit PCM WAV (a 44-byte header). */

/** Root mean square of the samples of one channel (0 = left) of a WAV of `channels` interleaved channels. */
export function rms(wav: Buffer, channel = 0, channels = 1): number {
  let sum = 0
  let n = 0
  for (let i = 44 + channel * 2; i + 1 < wav.length; i += 2 * channels) {
    const s = wav.readInt16LE(i)
    sum += s * s
    n++
  }
  return n === 0 ? 0 : Math.sqrt(sum / n)
}
