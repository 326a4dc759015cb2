/**
 * The patterns the OpenAPI document states for values whose whole rule is code: an http(s)
 * URL the WHATWG parser takes with a host (url.ts), a PSTN number after an end_user prefix
 * (party.ts, end-user.ts), a destination string (destination.ts), the xml_url: forms
 * (xml-url.ts), a ws_cti URI (cti/query.ts). They are attached to the zod schemas as metadata
 * (`.meta()`): the document shows them, the parse never runs them, so they cannot change what
 * the daemon takes.
 *
 * Each is a SUBSET of what the code takes, never more: a value that matches is never refused
 * for its form (test/openapi/ generates values from every pattern of the document and has the
 * daemon take them). The code also takes some values outside them (a URL the WHATWG parser
 * repairs, end_user prefix keys in another order...); the field's description says which.
 *
 * Portability (issue 26): a pattern is read by ECMA-262 (`u` flag), RE2/Go and Rust's regex, so
 * these use only `(?:...)`, classes, alternation, bounded repetition (at most 1000), `\xHH`
 * escapes and escaped syntax characters (not `\/`, which Rust's regex before 1.8 refuses): no
 * lookaround, no backreference, no `\d` `\w` `\s`, no `\u` (RE2 has none), no `&&` `--` `~~`
 * or unescaped `[` in a class (Rust's class operators). test/openapi/portable-pattern.ts
 * checks every pattern of the document for exactly this.
 */
import { END_USER_FIELDS } from '../../pbx/end-user.js'

const HEX = '[0-9A-Fa-f]'
const PCT = `%${HEX}{2}`
const alt = (...branches: readonly string[]): string => `(?:${branches.join('|')})`

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])'
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`
const H16 = `${HEX}{1,4}`
const IPV6 = alt(
  `(?:${H16}:){7}${H16}`,
  `(?:${H16}:){1,7}:`,
  `(?:${H16}:){1,6}:${H16}`,
  `(?:${H16}:){1,5}(?::${H16}){1,2}`,
  `(?:${H16}:){1,4}(?::${H16}){1,3}`,
  `(?:${H16}:){1,3}(?::${H16}){1,4}`,
  `(?:${H16}:){1,2}(?::${H16}){1,5}`,
  `${H16}:(?::${H16}){1,6}`,
  `:(?:(?::${H16}){1,7}|:)`,
)

const LABEL_CHAR = '[A-Za-z0-9_-]'
/**
 * A host label that is not an A-label: the WHATWG parser checks the punycode of an `xn--`
 * label and refuses a bad one, so the pattern leaves them out. `first` is the class of the
 * first character when it is not an x.
 */
const label = (first: string): string =>
  alt(`${first}${LABEL_CHAR}*`, `[Xx]${alt(`[A-MO-Za-mo-z0-9_-]${LABEL_CHAR}*`, `[Nn]${alt(`[A-Za-z0-9_]${LABEL_CHAR}*`, `-(?:[A-Za-z0-9_]${LABEL_CHAR}*)?`)}?`)}?`)
/**
 * A host name whose last label starts with a letter: one that ends in a number is read as an
 * IPv4 address by the WHATWG parser (and refused when it is not one).
 */
const HOST_NAME = `(?:${label('[A-WYZa-wyz0-9_-]')}\\.)*${label('[A-WYZa-wyz]')}\\.?`
const HOST = alt(HOST_NAME, IPV4, `\\[${IPV6}\\]`)
const PORT = `(?::${alt('[0-9]{1,4}', '[1-5][0-9]{4}', '6[0-4][0-9]{3}', '65[0-4][0-9]{2}', '655[0-2][0-9]', '6553[0-5]')}?)?`

/** RFC 3986's URI characters of userinfo, path segments, query and fragment; `comma` false leaves out `,`. */
function httpUrl(comma: boolean): string {
  const subDelims = comma ? "!$&'()*+,;=" : "!$&'()*+;="
  const userinfo = alt(`[A-Za-z0-9._~${subDelims}:-]`, PCT)
  const pchar = alt(`[A-Za-z0-9._~${subDelims}:@-]`, PCT)
  const tail = alt(pchar, '[/?]')
  return `[Hh][Tt][Tt][Pp][Ss]?://(?:${userinfo}*@)?${HOST}${PORT}(?:/${pchar}*)*(?:\\?${tail}*)?(?:#${tail}*)?`
}

/**
 * callback_url (and each URL of xml_url:): an absolute http/https URL, RFC 3986, with a host the
 * WHATWG parser takes. Outside it the daemon also takes what that parser repairs (`http:host`,
 * a backslash, a bad percent sign, characters RFC 3986 does not allow).
 */
export const HTTP_URL_PATTERN = `^${httpUrl(true)}$`

/** An optional + then 2 to 32 digits, * or # (config/schema.ts isPstnNumber). */
const PSTN = alt('\\+[0-9*#]{1,31}', '[0-9*#]{2,32}')

/** The longest end_user value the document's prefix form shows (the object form takes avatar up to 2048). */
export const PREFIX_VALUE_MAX = 256
/**
 * A prefix value: 1 to 256 characters that are not control characters nor `%` `,` `=` `}`,
 * or a percent-encoded printable ASCII character (how `,` `}` `=` `%` are sent).
 */
const PREFIX_VALUE = `${alt('[^\\x00-\\x1f\\x7f-\\x9f%,=}]', '%[2-6][0-9A-Fa-f]', '%7[0-9A-Ea-e]')}{1,${PREFIX_VALUE_MAX}}`

/**
 * `{key=value,...}` with each key at most once, in END_USER_FIELDS order (a pattern without
 * backreferences cannot say "any order, each once"; the daemon takes any order).
 */
const END_USER_PREFIX = (() => {
  const entry = (k: string): string => `${k}=${PREFIX_VALUE}`
  const startingAt = (i: number): string => entry(END_USER_FIELDS[i] as string) + END_USER_FIELDS.slice(i + 1).map((k) => `(?:,${entry(k)})?`).join('')
  return `\\{${alt(...END_USER_FIELDS.map((_, i) => startingAt(i)))}\\}`
})()

/** A PSTN party's string form: a PSTN number, optionally after an end_user prefix. */
export const PSTN_STRING_PATTERN = `^(?:${END_USER_PREFIX})?${PSTN}$`

/** What a destination names without a prefix: api/destination.ts DESTINATION_RE, written again (the property test has the daemon take its values). */
export const DESTINATION_NAME_PATTERN = '^[A-Za-z0-9._+*#-]{1,64}$'
/** A PSTN destination with end_user details (only for a number the domain does not claim). */
export const DESTINATION_PREFIX_PATTERN = `^${END_USER_PREFIX}${PSTN}$`

/** `xml_url:` then 1 to 8 comma-separated http/https URLs (no comma inside one). */
export const XML_URL_LIST_PATTERN = `^xml_url:${httpUrl(false)}(?:,${httpUrl(false)}){0,7}$`
/** `xml_url:inline_xml://` then base64 (standard or URL-safe); whether it is an IVR document only the parse can tell. */
export const XML_URL_INLINE_PATTERN = '^xml_url:inline_xml://[A-Za-z0-9+/_-]+={0,2}$'

/** `/` is left as it is: Rust's regex (before 1.8) refuses `\/`, and no engine reads `/` specially. */
const escapeLiteral = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')

const NAME = '[A-Za-z0-9][A-Za-z0-9._-]{0,63}'
const ID = '[A-Za-z0-9][A-Za-z0-9_-]{0,63}'

/**
 * gen_ws_ticket's uri: `{wsPath}?app_name=...` with one of user_id, user_name or
 * user_extension (then read_only), or `full_events=true&read_only=true`; then forced; or a
 * ws/wss/http/https URL of it. The daemon also takes other identifiers, any order, and
 * percent-encoded values.
 */
export function wsCtiUriPattern(wsPath: string): string {
  const bool = '(?:true|false)'
  const who = alt(`&user_${alt(`id=${ID}`, `name=${NAME}`, 'extension=[0-9]{1,32}')}(?:&read_only=${bool})?`, '&full_events=true&read_only=true')
  const origin = `(?:(?:[Hh][Tt][Tt][Pp]|[Ww][Ss])[Ss]?://${HOST}${PORT})?`
  return `^${origin}${escapeLiteral(wsPath)}\\?app_name=${NAME}${who}(?:&forced=${bool})?$`
}
