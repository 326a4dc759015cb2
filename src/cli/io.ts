/**
 * What every `cod` subcommand shares: the exit codes (one meaning each, documented in the
 * README and `cod --help`), the streams a command writes to (an interface, so a command can be
 * run in-process by a test or by another command), and argument parsing that turns node's
 * parseArgs throws into a usage error value.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { err, ok, type Result } from '../util/result.js'

/** 0: done, nothing wrong. */
export const EXIT_OK = 0
/** 1: the command ran and found problems (a refused file, an invalid document, a refused call...). */
export const EXIT_PROBLEMS = 1
/** 2: the command line itself is wrong (unknown option, missing argument). */
export const EXIT_USAGE = 2
export type ExitCode = typeof EXIT_OK | typeof EXIT_PROBLEMS | typeof EXIT_USAGE

export interface CliIo {
  readonly stdout: { write(s: string): unknown }
  readonly stderr: { write(s: string): unknown }
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  /** Environment variables (COD_TOKEN for `cod call`). */
  readonly env: Readonly<Record<string, string | undefined>>
}

export const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env })

/** Reads a stream to its end, refusing more than `maxBytes` (an IVR document, a token). */
export async function readAll(stream: NodeJS.ReadableStream, maxBytes: number): Promise<Result<Buffer, string>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += b.length
    if (size > maxBytes) return err(`more than ${maxBytes} bytes`)
    chunks.push(b)
  }
  return ok(Buffer.concat(chunks))
}

type Options = NonNullable<ParseArgsConfig['options']>

/** node's parseArgs, strict, with the usage mistake as a value instead of a throw. */
export function parseCommandLine<O extends Options>(
  argv: readonly string[],
  options: O,
  positionals: boolean,
): Result<CommandLine, string> {
  try {
    const r = parseArgs({ args: [...argv], options, strict: true, allowPositionals: positionals })
    return ok({ values: r.values as Record<string, string | boolean | string[] | undefined>, positionals: r.positionals })
  } catch (e) {
    return err((e as Error).message)
  }
}

/** A parsed command line (parseCommandLine). */
export type CommandLine = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] }

/**
 * parseCommandLine with every command's `-h/--help` (added to `options`): the parsed line, or the
 * exit code when the command is over already: its usage printed (0), or a usage mistake (2).
 */
export function parseOrExit(io: CliIo, usage: string, argv: readonly string[], options: Options, positionals: boolean): Result<CommandLine, ExitCode> {
  const parsed = parseCommandLine(argv, { ...options, help: { type: 'boolean', short: 'h' } }, positionals)
  if (!parsed.ok) return err(usageError(io, parsed.error, usage))
  if (parsed.value.values.help === true) {
    io.stdout.write(usage)
    return err(EXIT_OK)
  }
  return parsed
}

/** Writes a usage mistake and the command's usage on stderr: exit 2. */
export function usageError(io: CliIo, message: string, usage: string): ExitCode {
  io.stderr.write(`${message}\n\n${usage}`)
  return EXIT_USAGE
}

/** A string option's value (parseArgs types them loosely). */
export const stringOpt = (v: string | boolean | string[] | undefined): string | undefined => (typeof v === 'string' ? v : undefined)
