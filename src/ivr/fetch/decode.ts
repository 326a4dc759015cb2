/**
 * A fetched body's bytes as text: a byte order mark wins, then the Content-Type charset, then
 * (documents only) the XML declaration's encoding (Japanese IVR servers may still send
 * Shift_JIS), else UTF-8. Malformed bytes are an error rather than U+FFFD, as an XML parser
 * would refuse them anyway.
 */
import { TextDecoder } from 'node:util'
import { err, ok, type Result } from '../../util/result.js'

const charsetOf = (contentType: string): string | undefined => /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]

export const decodeBody = (bytes: Buffer, contentType: string, sniffXml: boolean): Result<string, string> => {
  let label: string | undefined
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) label = 'utf-8'
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) label = 'utf-16le'
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) label = 'utf-16be'
  label ??= charsetOf(contentType)
  if (label === undefined && sniffXml) {
    const head = bytes.subarray(0, 256).toString('latin1')
    label = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]
  }
  label ??= 'utf-8'
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(label, { fatal: true })
  } catch {
    return err(`unsupported charset "${label.slice(0, 40)}"`)
  }
  try {
    return ok(decoder.decode(bytes))
  } catch {
    return err(`body is not valid ${decoder.encoding}`)
  }
}
