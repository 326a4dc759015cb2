/**
 * The form mod_xml_curl posts (application/x-www-form-urlencoded). Every field is network input.
 *
 * FreeSWITCH builds the body with switch_event_build_param_string (mod_xml_curl.c,
 * xml_url_fetch): `hostname, section, tag_name, key_name, key_value` first, then the headers of
 * the request event. A name can therefore come twice with the same value (the `xml_locate` API
 * puts a `section` header in its event: mod_commands.c xml_locate_function), but no capture
 * (test/fixtures/freeswitch/xml_curl/, requests 01-15) holds a name twice with two values. Such a request was
 * not written by FreeSWITCH: the handler refuses it (`hasConflicts`), and `get()` never picks one
 * of two values, so a smuggled second `variable_cod_dest_value` cannot win.
 *
 * A dialplan request is ~8 kB in ~150 fields, of which the handlers read about twenty: `parse`
 * splits the body into names and still-encoded values in one pass and decodes a value only when
 * it is read (or when a name comes twice, to compare). The result is that of URLSearchParams
 * (WHATWG application/x-www-form-urlencoded parsing, which parsed every value before issue 15);
 * test/xmlcurl/form.test.ts compares the two on captured and malformed bodies.
 */

/** A body split into names (decoded) and values as they were sent (decoded when read). */
export interface ScannedBody {
  readonly encoded: Map<string, string>
  readonly conflicts: Set<string>
}

/**
 * One percent-encoded name or value, decoded as URLSearchParams decodes it: `+` is a space, `%XX`
 * a byte, the bytes UTF-8. decodeURIComponent gives the same text for a well-formed value; one it
 * refuses (a `%` without two hex digits, bytes that are not UTF-8) goes to URLSearchParams itself,
 * which keeps the first literal and replaces the second with U+FFFD.
 */
function decodeFormValue(raw: string): string {
  const spaced = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return new URLSearchParams(`v=${raw}`).get('v') ?? ''
  }
}

const needsDecoding = (raw: string): boolean => raw.includes('%') || raw.includes('+')

/** One pass over the body: `&` separates fields (empty ones skipped), the first `=` a name from its value. */
function scan(body: string): ScannedBody {
  const encoded = new Map<string, string>()
  const conflicts = new Set<string>()
  const length = body.length
  let start = 0
  // The next `=` at or after `start`, looked up again only once passed: the lookups cover
  // disjoint stretches of the body, so a body of fields without `=` stays one pass.
  let nextEquals = -1
  while (start < length) {
    let end = body.indexOf('&', start)
    if (end < 0) end = length
    if (end > start) {
      if (nextEquals < start) {
        nextEquals = body.indexOf('=', start)
        if (nextEquals < 0) nextEquals = length
      }
      const equals = nextEquals < end ? nextEquals : end
      const rawName = body.slice(start, equals)
      const value = equals < end ? body.slice(equals + 1, end) : ''
      const name = needsDecoding(rawName) ? decodeFormValue(rawName) : rawName
      const seen = encoded.get(name)
      if (seen === undefined) encoded.set(name, value)
      else if (seen !== value && decodeFormValue(seen) !== decodeFormValue(value)) conflicts.add(name)
    }
    start = end + 1
  }
  return { encoded, conflicts }
}

export class FetchForm {
  /** Values by name: decoded (from URLSearchParams) or as sent (from parse, with `decode` set). */
  private readonly values: Map<string, string>
  private readonly conflicts: Set<string>
  private readonly decode: boolean

  constructor(params: URLSearchParams | ScannedBody) {
    if (params instanceof URLSearchParams) {
      this.values = new Map()
      this.conflicts = new Set()
      this.decode = false
      for (const [k, v] of params) {
        const seen = this.values.get(k)
        if (seen === undefined) this.values.set(k, v)
        else if (seen !== v) this.conflicts.add(k)
      }
    } else {
      this.values = params.encoded
      this.conflicts = params.conflicts
      this.decode = true
    }
  }

  /** Parses a raw body. Like URLSearchParams it never throws: malformed escapes stay literal. */
  static parse(body: string): FetchForm {
    return new FetchForm(scan(body))
  }

  /** The field's value, or undefined when it is absent or was sent twice with different values. */
  get(name: string): string | undefined {
    if (this.conflicts.size > 0 && this.conflicts.has(name)) return undefined
    const value = this.values.get(name)
    return value !== undefined && this.decode && needsDecoding(value) ? decodeFormValue(value) : value
  }

  /** Some field arrived more than once with different values. */
  get hasConflicts(): boolean {
    return this.conflicts.size > 0
  }
}

