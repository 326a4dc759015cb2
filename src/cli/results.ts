/**
 * `cod results list | redeliver`: the operator's door to the result journal's dead letters
 * (results given up: docs/callbacks.md "Dead letters").
 *
 * How it reaches them, and why: through the journal folder itself, not a route of the running
 * daemon. `list` reads the segments without the lock (journal-reader.ts: nothing is written),
 * so it works beside a running daemon, or when the daemon cannot start. `redeliver` writes
 * (a `revived` record per letter), so it opens the journal like the daemon does, taking its
 * lock (src/journal/lock.ts): while a daemon runs on the folder the lock refuses, and the
 * command says to stop the daemon first. There is never a second writer on one journal, and no
 * new network door is opened: an admin route would need a credential above the domains'
 * tokens, which the configuration does not have. The revived results are delivered by the next
 * daemon start (which sends what the journal holds pending), with their original delivery id
 * and body bytes and a fresh `callbacks.give_up_after_ms` window.
 */
import { Writable } from 'node:stream'
import { loadConfig, formatProblem } from '../config/load.js'
import { journalDirOf, openJournal } from '../journal/index.js'
import type { DeadLetter } from '../journal/types.js'
import { createLogger } from '../util/logger.js'
import { readDeadLetters } from './journal-reader.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, stringOpt, usageError, type CliIo, type ExitCode } from './io.js'

const RESULTS_USAGE = `usage: cod results list      [--config conf/daemon.yaml] [--domain D] [--json]
       cod results redeliver [--config conf/daemon.yaml] (<delivery-id> ... | --all [--domain D])

Dead letters: results whose callback was given up (after callbacks.give_up_after_ms of
retries, or refused for good), kept in the result journal (journal.dir).

  list        prints each dead letter: delivery id, domain, request id, attempts, when and why
              it was given up, the callback URL (credentials hidden); --json: one JSON object a
              line, with the exact body. Reads the journal without locking it: safe while the
              daemon runs.
  redeliver   marks dead letters to be sent again (same delivery id and body bytes, a fresh
              give-up window); the daemon sends them at its next start. It writes the journal,
              so the daemon must be stopped (the journal's lock refuses otherwise):
              stop the daemon, redeliver, start it.
  --config    the daemon's file: where the journal is (default conf/daemon.yaml)
  --journal   the journal folder itself, instead of the one --config names
  --domain    only this domain's dead letters

Exit: 0 done; 1 a problem (no journal, an unknown delivery id, the journal in use by a running
daemon, a configuration refused); 2 a wrong command line.
`

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  journal: { type: 'string' },
  domain: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
} as const

/** A URL's user information (credentials a receiver may have put in its callback_url) hidden. */
const withoutCredentials = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.username === '' && u.password === '') return url
    u.username = '***'
    u.password = ''
    return u.toString()
  } catch {
    return '(not a URL)'
  }
}

const describe = (d: DeadLetter): string =>
  [
    `${d.result.deliveryId}  ${d.result.domain}  request ${d.result.requestId}`,
    `  given up ${new Date(d.deadAt).toISOString()} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}: ${d.reason}`,
    `  ${withoutCredentials(d.result.url)}`,
  ].join('\n')

const asJson = (d: DeadLetter): string =>
  JSON.stringify({
    delivery_id: d.result.deliveryId,
    domain: d.result.domain,
    request_id: d.result.requestId,
    url: withoutCredentials(d.result.url),
    attempts: d.attempts,
    reason: d.reason,
    dead_at: new Date(d.deadAt).toISOString(),
    created_at: new Date(d.result.createdAt).toISOString(),
    body: d.result.body,
  })

type ParsedValues = Record<string, string | boolean | string[] | undefined>

interface Where {
  readonly dir: string
  readonly giveUpAfterMs: number
}

/** The journal folder and the give-up window, from --journal or the daemon's file. */
async function locate(values: ParsedValues, io: CliIo): Promise<Where | undefined> {
  const configFile = stringOpt(values.config) ?? 'conf/daemon.yaml'
  const explicit = stringOpt(values.journal)
  const loaded = await loadConfig(configFile)
  if (!loaded.ok) {
    // A journal folder named outright does not need the configuration (default window then).
    if (explicit !== undefined && values.config === undefined) return { dir: explicit, giveUpAfterMs: 86_400_000 }
    io.stderr.write(`configuration refused:\n${loaded.error.map((p) => `  ${formatProblem(p)}`).join('\n')}\n`)
    return undefined
  }
  const cfg = loaded.value.daemon
  if (explicit === undefined && !cfg.journal.enabled) {
    io.stderr.write(`${loaded.value.file}: journal.enabled is false: there is no journal\n`)
    return undefined
  }
  return { dir: explicit ?? journalDirOf(configFile, cfg.journal.dir), giveUpAfterMs: cfg.callbacks.give_up_after_ms }
}

export async function runResults(argv: readonly string[], io: CliIo, now: () => number = Date.now): Promise<ExitCode> {
  const [sub, ...rest] = argv
  if (sub === '--help' || sub === '-h') {
    io.stdout.write(RESULTS_USAGE)
    return EXIT_OK
  }
  if (sub !== 'list' && sub !== 'redeliver') {
    return usageError(io, sub === undefined ? 'a subcommand is expected: list or redeliver' : `unknown subcommand "results ${sub}"`, RESULTS_USAGE)
  }
  const parsed = parseOrExit(io, RESULTS_USAGE, rest, OPTIONS, sub === 'redeliver')
  if (!parsed.ok) return parsed.error
  const { values, positionals } = parsed.value
  const domain = stringOpt(values.domain)?.toLowerCase()
  if (sub === 'list') {
    if (values.all !== undefined) return usageError(io, '--all belongs to redeliver', RESULTS_USAGE)
  } else {
    if (values.json !== undefined) return usageError(io, '--json belongs to list', RESULTS_USAGE)
    if ((values.all === true) === positionals.length > 0) return usageError(io, 'give delivery ids or --all (not both)', RESULTS_USAGE)
    if (domain !== undefined && values.all !== true) return usageError(io, '--domain goes with --all', RESULTS_USAGE)
  }
  const where = await locate(values, io)
  if (where === undefined) return EXIT_PROBLEMS
  const read = await readDeadLetters(where.dir)
  if (!read.ok) {
    io.stderr.write(`${read.error}\n`)
    return EXIT_PROBLEMS
  }
  if (read.value.kind === 'absent') {
    io.stderr.write(`no journal at ${where.dir}\n`)
    return sub === 'list' ? EXIT_OK : EXIT_PROBLEMS
  }
  const ofDomain = (d: DeadLetter) => domain === undefined || d.result.domain.toLowerCase() === domain
  if (sub === 'list') {
    const letters = read.value.deadLetters.filter(ofDomain).sort((a, b) => a.deadAt - b.deadAt)
    for (const d of letters) io.stdout.write(`${values.json === true ? asJson(d) : describe(d)}\n`)
    if (values.json !== true) io.stderr.write(`${letters.length} dead letter${letters.length === 1 ? '' : 's'} in ${where.dir}\n`)
    if (read.value.badLines > 0) io.stderr.write(`warning: ${read.value.badLines} damaged line(s) skipped (the daemon moves such a segment aside at its next start)\n`)
    return EXIT_OK
  }
  return redeliver(where, values.all === true ? undefined : positionals, ofDomain, io, now)
}

async function redeliver(where: Where, ids: readonly string[] | undefined, keep: (d: DeadLetter) => boolean, io: CliIo, now: () => number): Promise<ExitCode> {
  // Errors of the journal itself (a damaged segment moved aside) go to stderr as JSON lines.
  const toStderr = new Writable({
    write(chunk: Buffer, _encoding, done) {
      io.stderr.write(chunk.toString('utf8'))
      done()
    },
  })
  const opened = await openJournal({ dir: where.dir, logger: createLogger('warn', toStderr).child({ part: 'journal' }) })
  if (!opened.ok) {
    const inUse = opened.error.includes('in use by')
    io.stderr.write(`${opened.error}\n${inUse ? 'a daemon runs on this journal: stop it, redeliver, then start it (one writer per journal)\n' : ''}`)
    return EXIT_PROBLEMS
  }
  const journal = opened.value
  try {
    const dead = journal.deadLetters()
    let chosen: DeadLetter[]
    if (ids === undefined) {
      chosen = dead.filter(keep)
    } else {
      const unknown = ids.filter((id) => !dead.some((d) => d.result.deliveryId === id))
      if (unknown.length > 0) {
        io.stderr.write(`no dead letter with delivery id ${unknown.join(', ')}: nothing was changed\n`)
        return EXIT_PROBLEMS
      }
      chosen = dead.filter((d) => ids.includes(d.result.deliveryId))
    }
    const giveUpAt = now() + where.giveUpAfterMs
    for (const d of chosen) {
      await journal.revived(d.result.deliveryId, giveUpAt)
      io.stdout.write(`${d.result.deliveryId}  ${d.result.domain}  request ${d.result.requestId}: to be sent again\n`)
    }
    io.stderr.write(`${chosen.length} dead letter${chosen.length === 1 ? '' : 's'} revived: the daemon sends them at its next start\n`)
    return journal.stats().writeErrors > 0 ? EXIT_PROBLEMS : EXIT_OK
  } finally {
    await journal.close()
  }
}
