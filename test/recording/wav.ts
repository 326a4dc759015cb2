/** A real PCM WAV for the recording tests: 8 kHz, 16-bit, stereo, `ms` long, a tone. */
export function wavBytes(ms: number): Buffer {
  const rate = 8000
  const channels = 2
  const frames = Math.round((rate * ms) / 1000)
  const data = Buffer.alloc(frames * channels * 2)
  for (let i = 0; i < frames; i++) {
    const v = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate))
    data.writeInt16LE(v, i * 4)
    data.writeInt16LE(-v, i * 4 + 2)
  }
  const header = Buffer.alloc(44)
  header.write('RIFF', 0, 'latin1')
  header.writeUInt32LE(36 + data.length, 4)
  header.write('WAVE', 8, 'latin1')
  header.write('fmt ', 12, 'latin1')
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(channels, 22)
  header.writeUInt32LE(rate, 24)
  header.writeUInt32LE(rate * channels * 2, 28)
  header.writeUInt16LE(channels * 2, 32)
  header.writeUInt16LE(16, 34)
  header.write('data', 36, 'latin1')
  header.writeUInt32LE(data.length, 40)
  return Buffer.concat([header, data])
}
