/**
 * `cod ivr validate`: checks IVR documents with the daemon's own parser and checks
 * (src/ivr/document/parse.ts), so an IVR author gets, before submitting a document, the very
 * message the daemon would send back as `Error=` or in an `invalid_xml` reply: the line and
 * column, the element's path and the reason. Like the daemon, it stops at a document's first
 * problem.
 */
import { readFile } from 'node:fs/promises'
import { parseIvrDocument } from '../ivr/document/index.js'
import { DEFAULT_IVR_LIMITS } from '../ivr/syntax/types.js'
import { err, ok, type Result } from '../util/result.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, readAll, usageError, type CliIo, type ExitCode } from './io.js'

const IVR_USAGE = `usage: cod ivr validate <file|-> [<file> ...]

Validates IVR documents (docs/ivr.md) with the daemon's parser: unknown elements and attributes,
wrong nesting, values out of range, bad {{ expressions }}, GoTo targets that do not exist,
limits (${DEFAULT_IVR_LIMITS.maxBytes} bytes, ${DEFAULT_IVR_LIMITS.maxElements} elements, depth ${DEFAULT_IVR_LIMITS.maxDepth}). "-" reads the document from stdin.
Prints "<file>: ok", or "<file>: line L, column C (<path>): <reason>", the daemon's message.

Exit: 0 every document is valid; 1 a document is refused (or unreadable); 2 a wrong command line.
`

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The document's text as the daemon would see it: UTF-8, within the size limit. */
async function readDocument(name: string, io: CliIo): Promise<Result<string, string>> {
  let bytes: Buffer
  if (name === '-') {
    // One byte over the limit is enough to let the parser say "more than the limit".
    const r = await readAll(io.stdin, DEFAULT_IVR_LIMITS.maxBytes + 1).catch((e: unknown) => err((e as Error).message))
    if (!r.ok) return err(`the document is ${r.error}, more than the limit of ${DEFAULT_IVR_LIMITS.maxBytes}`)
    bytes = r.value
  } else {
    try {
      bytes = await readFile(name)
    } catch (e) {
      return err(`cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
    }
  }
  try {
    return ok(utf8.decode(bytes))
  } catch {
    return err('the document is not UTF-8 text')
  }
}

export async function runIvr(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [sub, ...rest] = argv
  if (sub === '--help' || sub === '-h') {
    io.stdout.write(IVR_USAGE)
    return EXIT_OK
  }
  if (sub !== 'validate') return usageError(io, sub === undefined ? 'a subcommand is expected: validate' : `unknown subcommand "ivr ${sub}"`, IVR_USAGE)
  const parsed = parseOrExit(io, IVR_USAGE, rest, {}, true)
  if (!parsed.ok) return parsed.error
  const names = parsed.value.positionals
  if (names.length === 0) return usageError(io, 'a file (or "-" for stdin) is expected', IVR_USAGE)
  if (names.filter((n) => n === '-').length > 1) return usageError(io, 'stdin ("-") can be read once', IVR_USAGE)
  let code: ExitCode = EXIT_OK
  for (const name of names) {
    const label = name === '-' ? '<stdin>' : name
    const text = await readDocument(name, io)
    const checked = text.ok ? parseIvrDocument(text.value) : text
    if (checked.ok) {
      io.stdout.write(`${label}: ok\n`)
    } else {
      io.stdout.write(`${label}: ${typeof checked.error === 'string' ? checked.error : checked.error.reason}\n`)
      code = EXIT_PROBLEMS
    }
  }
  return code
}
