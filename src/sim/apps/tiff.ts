/**
 * Just enough TIFF for the simulated fax (fax.ts): how many pages a file has (the IFD chain of
 * TIFF 6.0 section 2, either byte order), and a blank multi-page fax TIFF to write where rxfax
 * receives (1728 pixels wide, 204x98 dpi, one bit per pixel, uncompressed: what T.4 standard
 * resolution pages are, and what libtiff's tiffinfo reads).
 */
const MAX_PAGES = 1000

/** Pages of a TIFF, or undefined when it is not one (a bad header, an IFD out of the file). */
export function countTiffPages(b: Buffer): number | undefined {
  if (b.length < 8) return undefined
  const order = b.toString('latin1', 0, 2)
  if (order !== 'II' && order !== 'MM') return undefined
  const le = order === 'II'
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o))
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o))
  if (u16(2) !== 42) return undefined
  let offset = u32(4)
  let pages = 0
  const seen = new Set<number>()
  while (offset !== 0) {
    if (offset + 2 > b.length || seen.has(offset) || pages >= MAX_PAGES) return undefined
    seen.add(offset)
    const entries = u16(offset)
    const next = offset + 2 + entries * 12
    if (next + 4 > b.length) return undefined
    pages++
    offset = u32(next)
  }
  return pages > 0 ? pages : undefined
}

const WIDTH = 1728
const ROWS = 16
const ROW_BYTES = WIDTH / 8

/** A blank fax of `pages` pages (little-endian, each page one strip of ROWS white rows). */
export function blankFaxTiff(pages: number): Buffer {
  const tags = 14
  const ifdBytes = 2 + tags * 12 + 4
  const strip = ROWS * ROW_BYTES
  // Per page: the IFD, then two RATIONALs (x and y resolution), then the strip.
  const pageBytes = ifdBytes + 16 + strip
  const b = Buffer.alloc(8 + pages * pageBytes)
  b.write('II', 0, 'latin1')
  b.writeUInt16LE(42, 2)
  b.writeUInt32LE(8, 4)
  for (let p = 0; p < pages; p++) {
    const ifd = 8 + p * pageBytes
    const xres = ifd + ifdBytes
    const data = xres + 16
    b.writeUInt16LE(tags, ifd)
    const entry = (i: number, tag: number, type: number, count: number, value: number, second?: number) => {
      const o = ifd + 2 + i * 12
      b.writeUInt16LE(tag, o)
      b.writeUInt16LE(type, o + 2)
      b.writeUInt32LE(count, o + 4)
      if (type === 3 && second !== undefined) {
        b.writeUInt16LE(value, o + 8)
        b.writeUInt16LE(second, o + 10)
      } else if (type === 3) b.writeUInt16LE(value, o + 8)
      else b.writeUInt32LE(value, o + 8)
    }
    // Tags in ascending order, as TIFF requires (SHORT = 3, LONG = 4, RATIONAL = 5).
    entry(0, 254, 4, 1, 2) // NewSubfileType: a page of a multi-page document
    entry(1, 256, 3, 1, WIDTH) // ImageWidth
    entry(2, 257, 3, 1, ROWS) // ImageLength
    entry(3, 258, 3, 1, 1) // BitsPerSample
    entry(4, 259, 3, 1, 1) // Compression: none
    entry(5, 262, 3, 1, 0) // PhotometricInterpretation: WhiteIsZero
    entry(6, 266, 3, 1, 1) // FillOrder
    entry(7, 273, 4, 1, data) // StripOffsets
    entry(8, 277, 3, 1, 1) // SamplesPerPixel
    entry(9, 278, 3, 1, ROWS) // RowsPerStrip
    entry(10, 279, 4, 1, strip) // StripByteCounts
    entry(11, 282, 5, 1, xres) // XResolution
    entry(12, 283, 5, 1, xres + 8) // YResolution
    entry(13, 297, 3, 2, p, pages) // PageNumber
    b.writeUInt32LE(p + 1 < pages ? ifd + pageBytes : 0, ifd + 2 + tags * 12)
    b.writeUInt32LE(204, xres)
    b.writeUInt32LE(1, xres + 4)
    b.writeUInt32LE(98, xres + 8)
    b.writeUInt32LE(1, xres + 12)
  }
  return b
}
