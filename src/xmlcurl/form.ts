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
 */

export class FetchForm {
  private readonly single = new Map<string, string>()
  private readonly conflicts = new Set<string>()

  constructor(params: URLSearchParams) {
    for (const [k, v] of params) {
      const seen = this.single.get(k)
      if (seen === undefined) this.single.set(k, v)
      else if (seen !== v) this.conflicts.add(k)
    }
  }

  /** Parses a raw body. URLSearchParams never throws: malformed escapes stay literal. */
  static parse(body: string): FetchForm {
    return new FetchForm(new URLSearchParams(body))
  }

  /** The field's value, or undefined when it is absent or was sent twice with different values. */
  get(name: string): string | undefined {
    return this.conflicts.has(name) ? undefined : this.single.get(name)
  }

  /** Some field arrived more than once with different values. */
  get hasConflicts(): boolean {
    return this.conflicts.size > 0
  }
}
