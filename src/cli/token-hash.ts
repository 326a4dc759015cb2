/**
 * `cod token hash`: turns an API token into the `sha256:<hex>` form `api_tokens` accepts, so a
 * domain file need not hold the token itself (src/api/auth.ts compares the SHA-256 of the
 * presented password with it). The token is read on stdin, never from the command line (which
 * other users of the host can read in the process list), and must be one the daemon would
 * accept in plain form: the domain schema's own token rule decides.
 */
import { createHash } from 'node:crypto'
import { domainSchema } from '../config/schema.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, readAll, usageError, type CliIo, type ExitCode } from './io.js'

const TOKEN_USAGE = `usage: cod token hash  < file-with-the-token
       printf %s "$TOKEN" | cod token hash

Reads one API token on stdin (one trailing newline is ignored) and prints "sha256:<hex>", the
form to put in a domain's api_tokens instead of the token. The token must be what api_tokens
accepts as a plain token: 16 to 256 printable ASCII characters, no spaces.

Exit: 0 printed; 1 the token is refused (too short or long, other characters, already a
hash); 2 a wrong command line.
`

const tokenRule = domainSchema.shape.api_tokens.element

export async function runToken(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [sub, ...rest] = argv
  if (sub === '--help' || sub === '-h') {
    io.stdout.write(TOKEN_USAGE)
    return EXIT_OK
  }
  if (sub !== 'hash') return usageError(io, sub === undefined ? 'a subcommand is expected: hash' : `unknown subcommand "token ${sub}"`, TOKEN_USAGE)
  const parsed = parseOrExit(io, TOKEN_USAGE, rest, {}, false)
  if (!parsed.ok) return parsed.error
  if (io.stdin.isTTY === true) io.stderr.write('type the token, then Enter and Ctrl-D:\n')
  const read = await readAll(io.stdin, 4096)
  if (!read.ok) {
    io.stderr.write(`token refused: ${read.error} on stdin\n`)
    return EXIT_PROBLEMS
  }
  const token = read.value.toString('utf8').replace(/\r?\n$/, '')
  if (token.startsWith('sha256:')) {
    io.stderr.write('token refused: it is already a "sha256:" digest; hash the token itself\n')
    return EXIT_PROBLEMS
  }
  const checked = tokenRule.safeParse(token)
  if (!checked.success) {
    const detail = token.length < 16 ? ` (it has ${token.length})` : /[\r\n]/.test(token) ? ' (one token, one line)' : ''
    io.stderr.write(`token refused: api_tokens accepts 16-256 printable ASCII characters without spaces${detail}\n`)
    return EXIT_PROBLEMS
  }
  io.stdout.write(`sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}\n`)
  return EXIT_OK
}
