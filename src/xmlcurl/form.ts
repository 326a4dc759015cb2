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

/**
 * A body split into names (decoded) and where each first value starts in the body (-1: no `=`,
 * the empty value), decoded when read.
 */
export interface ScannedBody {
  readonly body: string
  readonly starts: Map<string, number>
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

/** The value that starts at `start` (see ScannedBody), still encoded. */
function rawValueAt(body: string, start: number): string {
  if (start < 0) return ''
  const end = body.indexOf('&', start)
  return body.slice(start, end < 0 ? body.length : end)
}

/** The next `what` at or after `from`, or the body's length when there is none. */
function nextIndex(body: string, what: string, from: number): number {
  const at = body.indexOf(what, from)
  return at < 0 ? body.length : at
}

/** One pass over the body: `&` separates fields (empty ones skipped), the first `=` a name from its value. */
function scan(body: string): ScannedBody {
  const starts = new Map<string, number>()
  const conflicts = new Set<string>()
  const length = body.length
  // The next `=`, `%` and `+` at or after `start`, each looked up again only once passed: the
  // lookups cover disjoint stretches of the body, so a body of fields without `=` stays one pass.
  let nextEquals = -1
  let nextPercent = -1
  let nextPlus = -1
  let start = 0
  while (start < length) {
    let end = body.indexOf('&', start)
    if (end < 0) end = length
    if (end > start) {
      if (nextEquals < start) nextEquals = nextIndex(body, '=', start)
      if (nextPercent < start) nextPercent = nextIndex(body, '%', start)
      if (nextPlus < start) nextPlus = nextIndex(body, '+', start)
      const equals = nextEquals < end ? nextEquals : end
      const rawName = body.slice(start, equals)
      const name = nextPercent < equals || nextPlus < equals ? decodeFormValue(rawName) : rawName
      const valueStart = equals < end ? equals + 1 : -1
      const seen = starts.get(name)
      if (seen === undefined) starts.set(name, valueStart)
      else if (!conflicts.has(name)) {
        const before = rawValueAt(body, seen)
        const now = rawValueAt(body, valueStart)
        if (before !== now && decodeFormValue(before) !== decodeFormValue(now)) conflicts.add(name)
      }
    }
    start = end + 1
  }
  return { body, starts, conflicts }
}

export class FetchForm {
  /** Decoded values by name (from URLSearchParams), or the scanned body (from parse). */
  private readonly fields: { readonly decoded: Map<string, string> } | { readonly scanned: ScannedBody }
  private readonly conflicts: Set<string>

  constructor(params: URLSearchParams | ScannedBody) {
    if (params instanceof URLSearchParams) {
      const decoded = new Map<string, string>()
      this.conflicts = new Set()
      for (const [k, v] of params) {
        const seen = decoded.get(k)
        if (seen === undefined) decoded.set(k, v)
        else if (seen !== v) this.conflicts.add(k)
      }
      this.fields = { decoded }
    } else {
      this.fields = { scanned: params }
      this.conflicts = params.conflicts
    }
  }

  /** Parses a raw body. Like URLSearchParams it never throws: malformed escapes stay literal. */
  static parse(body: string): FetchForm {
    return new FetchForm(scan(body))
  }

  /** The field's value, or undefined when it is absent or was sent twice with different values. */
  get(name: string): string | undefined {
    if (this.conflicts.size > 0 && this.conflicts.has(name)) return undefined
    if ('decoded' in this.fields) return this.fields.decoded.get(name)
    const { body, starts } = this.fields.scanned
    const start = starts.get(name)
    if (start === undefined) return undefined
    const raw = rawValueAt(body, start)
    return needsDecoding(raw) ? decodeFormValue(raw) : raw
  }

  /** Some field arrived more than once with different values. */
  get hasConflicts(): boolean {
    return this.conflicts.size > 0
  }
}
