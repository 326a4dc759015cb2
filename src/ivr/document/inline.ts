/**
 * `xml_url:inline_xml://<base64>`: the document travels in the destination string. Decoding is
 * strict, so that a truncated or mangled destination is refused (invalid_xml) instead of
 * running half a document: one alphabet (standard `+/` or URL-safe `-_`), padding optional but
 * correct when present, no whitespace, zero unused bits, and the bytes must be UTF-8.
 */
import { err, ok, type Result } from '../../util/result.js'
import { DEFAULT_IVR_LIMITS } from '../syntax/types.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })

export function decodeInlineXml(base64: string, maxBytes: number = DEFAULT_IVR_LIMITS.maxBytes): Result<string, string> {
  if (base64 === '') return err('inline_xml is empty')
  // 4 characters per 3 bytes: refuse an oversized document before decoding it.
  if (base64.length > Math.ceil(maxBytes / 3) * 4) return err(`inline_xml decodes to more than ${maxBytes} bytes`)
  const m = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(base64)
  if (m === null) {
    const bad = [...base64].findIndex((c) => !/[A-Za-z0-9+/_=-]/.test(c))
    if (bad >= 0) return err(`inline_xml is not base64: character ${JSON.stringify(base64[bad])} at position ${bad + 1}`)
    return err('inline_xml is not base64: "=" is only allowed at the end')
  }
  const data = m[1] as string
  const padding = m[2] as string
  const standard = /[+/]/.test(data)
  const urlSafe = /[-_]/.test(data)
  if (standard && urlSafe) return err('inline_xml mixes the standard (+/) and URL-safe (-_) base64 alphabets')
  if (data.length % 4 === 1) return err('inline_xml is not base64: its length is impossible (truncated?)')
  if (padding !== '' && (data.length + padding.length) % 4 !== 0) return err('inline_xml is not base64: wrong padding')
  const normal = urlSafe ? data.replace(/-/g, '+').replace(/_/g, '/') : data
  const bytes = Buffer.from(normal, 'base64')
  // Buffer ignores non-zero unused bits; a canonical re-encoding shows them (a mangled tail).
  if (bytes.toString('base64').replace(/=+$/, '') !== normal) {
    return err('inline_xml is not canonical base64 (non-zero bits after the last byte: truncated or altered?)')
  }
  if (bytes.length > maxBytes) return err(`inline_xml decodes to more than ${maxBytes} bytes`)
  try {
    return ok(utf8.decode(bytes))
  } catch {
    return err('inline_xml does not decode to UTF-8 text')
  }
}
