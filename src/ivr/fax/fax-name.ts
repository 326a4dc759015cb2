/**
 * What an IVR document may name as a fax file (`<SendFax>` and `<ReceiveFax>` text): a TIFF
 * inside the domain's fax folder (`ivr.fax_dir/<domain>/`), written as a relative path of plain
 * names. The name ends up as the argument of mod_spandsp's `txfax`/`rxfax`, which goes through
 * the same expansion and file layer as Play's media (src/ivr/elements/audio-source.ts says what
 * FreeSWITCH does with `${...}`, `<module>://`, `{...}` and absolute paths), so the same
 * hostile forms are refused here, each with the rule it broke.
 *
 * Every segment must pass util/confined-path.ts's alphabet (the one confinement check of the
 * daemon's files): percent escapes, look-alike Unicode, NUL and separators fail by the alphabet
 * itself. At run time the path is made by confinedPath, which also refuses symbolic links
 * below the domain's folder (faxPath).
 */
import { confinedPath, segmentProblem } from '../../util/confined-path.js'
import { err, ok, type Result } from '../../util/result.js'

export const FAX_NAME_RULE =
  'a TIFF file path relative to the domain\'s fax folder (names of A-Z a-z 0-9 _ . - separated by /, ending in .tif or .tiff; no absolute path, no "..")'

/** Longest name with its folders; folders in it. */
const MAX_NAME = 255
const MAX_DEPTH = 8

const TIFF_RE = /\.tiff?$/i
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/

/** The first rule a fax file name breaks, in words an IVR author can act on, or undefined. */
function faxNameProblem(s: string): string | undefined {
  if (s === '') return 'is empty'
  if (CONTROL_RE.test(s)) return 'contains a control character'
  if (s.includes('://')) return 'names a FreeSWITCH file module ("<module>://"): a fax is a file of the fax folder'
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return 'starts with a scheme or drive letter ("x:")'
  if (s.startsWith('/')) return 'is an absolute path: a fax file is named relative to the domain\'s fax folder'
  if (s.startsWith('~')) return 'starts with "~"'
  if (s.includes('\\')) return 'contains a backslash'
  if (s.includes('$')) return 'contains "$" (FreeSWITCH would expand ${...})'
  if (s.includes('{') || s.includes('}')) return 'contains "{" or "}" (FreeSWITCH file parameters)'
  if (s.includes('%')) return 'contains "%" (file names are not percent-decoded)'
  if (/\s/.test(s)) return 'contains white space'
  if (s.length > MAX_NAME) return `is longer than ${MAX_NAME} characters`
  const segments = s.split('/')
  if (segments.length > MAX_DEPTH) return `has more than ${MAX_DEPTH - 1} folders`
  for (const segment of segments) {
    if (segment === '') return 'has an empty folder name ("//" or a trailing "/")'
    if (segment === '..' || segment === '.') return `has a "${segment}" folder`
    if (segment.startsWith('.')) return 'has a name starting with "."'
    if (segmentProblem(segment) !== undefined) return 'has a character outside A-Z a-z 0-9 _ . -'
  }
  if (!TIFF_RE.test(s)) return 'does not end in .tif or .tiff'
  return undefined
}

/** Reads a fax file name (the parser for literals, resolveParam for rendered templates). */
export function readFaxName(raw: string): Result<string, string> {
  const s = raw.trim()
  const problem = faxNameProblem(s)
  return problem === undefined ? ok(s) : err(`must be ${FAX_NAME_RULE}: ${JSON.stringify(s.slice(0, 80))} ${problem}`)
}

/** Where received faxes go inside a domain's fax folder (docs/ivr.md "ReceiveFax"). */
export const RECEIVED_FOLDER = 'received_faxes'

/**
 * The absolute path of a (checked) fax name: `<faxDir>/<domain>/<name>`, confined (no symbolic
 * link below the fax folder, nothing outside it). `folder` puts it in a sub-folder first
 * (ReceiveFax: received_faxes).
 */
export function faxPath(faxDir: string, domain: string, name: string, folder?: string): Result<string, string> {
  const problem = faxNameProblem(name)
  if (problem !== undefined) return err(`${JSON.stringify(name.slice(0, 80))} ${problem}`)
  const segments = [domain, ...(folder !== undefined ? [folder] : []), ...name.split('/')]
  const path = confinedPath(faxDir, ...segments)
  return path.ok ? path : err(`${JSON.stringify(name.slice(0, 80))}: ${path.error}`)
}
