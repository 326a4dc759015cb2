/**
 * `cod call`: a test call through a running daemon's API, for an operator or an application
 * developer trying a configuration or the sandbox (cod simulator). It opens a CTI connection
 * with `full_events=true` first (call-events.ts), sends the request, prints the reply, then the
 * request's channel events until its channels are gone, or a timeout. With --status-events it
 * also receives the request's status events (docs/events.md) on a listener of its own and prints
 * each as it comes.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Operation } from '../origination/plan.js'
import { openCtiFeed, RequestChannels, type ChannelEvent, type CtiFeed } from './call-events.js'
import { err, ok, type Result } from '../util/result.js'
import { EXIT_OK, EXIT_PROBLEMS, parseCommandLine, stringOpt, usageError, type CliIo, type ExitCode } from './io.js'

const CALL_USAGE = `usage: cod call <operation> --domain D [--token T] [--url http://127.0.0.1:8080] [--prefix /api]
                [--json '{...}' | key=value ... key:=<json> ...] [--timeout 120] [--raw] [--no-events]
                [--status-events]

Sends one request (operation: call_user, call_group, call_external, initiate_call) to a
running daemon with Basic auth (the domain and an API token), prints the HTTP status and reply,
then the events of the request's channels (from a CTI connection with full_events=true, opened
before the request) until they have all ended.

  --domain    the domain (Basic auth username)
  --token     an API token of it; default: the COD_TOKEN environment variable (a token on the
              command line is visible to other users of the host)
  --url       the daemon's base URL (default http://127.0.0.1:8080); --prefix its http.prefix
  --json      the request body as a JSON object; or key=value (a string) and key:=<json>
              (a number, true, an object...) pairs, e.g. user_name=alice destination=bob
  --timeout   seconds to wait for the call to end (default 120)
  --raw       print the CTI frames as received (one JSON a line) instead of a summary
  --no-events only the reply (no CTI connection)
  --status-events
              also print the request's status events (docs/events.md): they are sent to a
              listener cod call opens on 127.0.0.1 (status_callback_url), so the daemon must run
              on this host and allow 127.0.0.1 in callbacks.allow

Example: COD_TOKEN=demo-token-example-test cod call call_user --domain example.test \\
           user_name=alice destination=bob

Exit: 0 the request was accepted and its channels ended; 1 the request was refused (the reply
says why), the events did not end within --timeout, or the daemon was not reached;
2 a wrong command line.
`

const KNOWN = { call_user: true, call_group: true, call_external: true, initiate_call: true } satisfies Record<Operation, true>
const isOperation = (s: string): s is Operation => Object.hasOwn(KNOWN, s)

/** key=value and key:=json pairs into a body; a mistake is named. */
function bodyOf(pairs: readonly string[]): Result<Record<string, unknown>, string> {
  const body: Record<string, unknown> = {}
  for (const pair of pairs) {
    const json = /^([^=:]+):=(.*)$/s.exec(pair)
    const text = /^([^=:]+)=(.*)$/s.exec(pair)
    if (json?.[1] !== undefined) {
      try {
        body[json[1]] = JSON.parse(json[2] ?? '')
      } catch {
        return err(`${pair}: the value after ":=" must be JSON`)
      }
    } else if (text?.[1] !== undefined) {
      body[text[1]] = text[2] ?? ''
    } else {
      return err(`${pair}: expected key=value or key:=<json>`)
    }
  }
  return ok(body)
}

const elapsed = (t0: number): string => `+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)

const summary = (e: ChannelEvent): string => {
  const c = e.channel
  const cause = e.event === 'removed' && c.hangup_cause !== null ? `  ${c.hangup_cause}` : ''
  return `${e.event.padEnd(8)} ${c.uuid}  ${String(c.direction).padEnd(8)} ${String(c.state).padEnd(10)} ${c.calling_number ?? '-'} -> ${c.called_number ?? '-'}${cause}`
}

/** A checked command line: what to send where, and how to follow it. */
interface CallRequest {
  readonly operation: Operation
  readonly body: Record<string, unknown>
  /** The API's root: base URL and prefix, e.g. http://127.0.0.1:8080/api. */
  readonly root: string
  readonly authorization: string
  readonly timeoutMs: number
  readonly raw: boolean
  readonly followEvents: boolean
  readonly statusEvents: boolean
}

const CALL_OPTIONS = {
  domain: { type: 'string' },
  token: { type: 'string' },
  url: { type: 'string' },
  prefix: { type: 'string' },
  json: { type: 'string' },
  timeout: { type: 'string' },
  raw: { type: 'boolean' },
  'no-events': { type: 'boolean' },
  'status-events': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** The body from --json or from key=value pairs (one of them). */
function requestBody(jsonText: string | undefined, pairs: readonly string[]): Result<Record<string, unknown>, string> {
  if (jsonText === undefined) return bodyOf(pairs)
  if (pairs.length > 0) return err('--json or key=value pairs, not both')
  let v: unknown
  try {
    v = JSON.parse(jsonText)
  } catch {
    return err('--json is not JSON')
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return err('--json must be a JSON object')
  return ok(v as Record<string, unknown>)
}

/** Checks the command line; a mistake is its message (exit 2). */
function parseCall(argv: readonly string[], env: CliIo['env']): Result<CallRequest | 'help', string> {
  const parsed = parseCommandLine(argv, CALL_OPTIONS, true)
  if (!parsed.ok) return parsed
  const { values, positionals } = parsed.value
  if (values.help === true) return ok('help')
  const [operation, ...pairs] = positionals
  if (operation === undefined) return err('an operation is expected')
  if (!isOperation(operation)) return err(`unknown operation "${operation}"`)
  const domain = stringOpt(values.domain)
  const token = stringOpt(values.token) ?? env.COD_TOKEN
  if (domain === undefined || token === undefined || token === '') return err('--domain and a token (--token or COD_TOKEN) are required')
  const body = requestBody(stringOpt(values.json), pairs)
  if (!body.ok) return body
  const statusEvents = values['status-events'] === true
  if (statusEvents && 'status_callback_url' in body.value) return err('--status-events sets status_callback_url itself: give one or the other')
  const timeoutText = stringOpt(values.timeout) ?? '120'
  const timeoutS = Number(timeoutText)
  if (!/^\d+(\.\d+)?$/.test(timeoutText) || timeoutS <= 0 || timeoutS > 86_400) return err('--timeout must be seconds above 0 (at most 86400)')
  let base: URL
  try {
    base = new URL(stringOpt(values.url) ?? 'http://127.0.0.1:8080')
  } catch {
    return err('--url must be an http(s) URL')
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return err('--url must be an http(s) URL')
  const prefix = (stringOpt(values.prefix) ?? '/api').replace(/\/+$/, '')
  return ok({
    operation,
    body: body.value,
    root: `${base.origin}${base.pathname.replace(/\/+$/, '')}${prefix}`,
    authorization: `Basic ${Buffer.from(`${domain}:${token}`).toString('base64')}`,
    timeoutMs: timeoutS * 1000,
    raw: values.raw === true,
    followEvents: values['no-events'] !== true,
    statusEvents,
  })
}

/** The error's own message and, for a network failure, its cause (ECONNREFUSED...). */
const describeFailure = (e: unknown): string => {
  const cause = (e as { cause?: unknown }).cause
  return `${(e as Error).message}${cause instanceof Error ? ` (${cause.message})` : ''}`
}

/** A status event as received (docs/events.md): what a line shows of it. */
interface StatusEvent {
  readonly event?: string
  readonly uuid?: string
  readonly leg?: string
  readonly sequence?: number
  readonly hangup_cause?: string | null
  readonly hangup_by?: string | null
  readonly billsec?: number | null
}

const statusLine = (e: StatusEvent): string => {
  const end = e.event === 'completed' ? `  ${e.hangup_cause ?? '?'} by ${e.hangup_by ?? '?'}, billsec ${e.billsec ?? '?'}` : ''
  return `status   #${String(e.sequence ?? '?').padEnd(3)} ${String(e.event).padEnd(9)} ${String(e.leg).padEnd(11)} ${e.uuid ?? '-'}${end}`
}

/**
 * A listener for the request's status events on 127.0.0.1 (an ephemeral port): each is printed as
 * it comes and answered 204. `settled()`: every leg that told an event has told its `completed`.
 */
async function statusReceiver(t0: number, io: CliIo): Promise<{ url: string; settled(): boolean; close(): void }> {
  const told = new Map<string, boolean>()
  const server: Server = createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (text += c.length + text.length <= 65_536 ? c : ''))
    req.on('end', () => {
      try {
        const e = JSON.parse(text) as StatusEvent
        if (e.uuid !== undefined) told.set(e.uuid, told.get(e.uuid) === true || e.event === 'completed')
        io.stdout.write(`${elapsed(t0)}  ${statusLine(e)}\n`)
      } catch {
        io.stderr.write('a status event that is not JSON\n')
      }
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/status`,
    settled: () => told.size > 0 && [...told.values()].every(Boolean),
    close: () => void server.close(),
  }
}

/** Sends the request: the HTTP status and body text, or why it could not be sent. */
async function send(req: CallRequest, extra: Record<string, unknown>): Promise<Result<{ status: number; text: string }, string>> {
  try {
    const res = await fetch(`${req.root}/${req.operation}`, {
      method: 'POST',
      headers: { authorization: req.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ ...req.body, ...extra }),
      signal: AbortSignal.timeout(30_000),
    })
    return ok({ status: res.status, text: await res.text() })
  } catch (e) {
    return err(describeFailure(e))
  }
}

/** The UUIDs of an accepted request's reply; empty for any other reply. */
function acceptedUuids(status: number, text: string): string[] {
  try {
    const reply = JSON.parse(text) as { result_code?: unknown; uuids?: unknown }
    if (status === 200 && reply.result_code === 0 && Array.isArray(reply.uuids)) return reply.uuids.filter((u): u is string => typeof u === 'string')
  } catch {
    // not JSON: not accepted
  }
  return []
}

export async function runCall(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseCall(argv, io.env)
  if (!parsed.ok) return usageError(io, parsed.error, CALL_USAGE)
  if (parsed.value === 'help') {
    io.stdout.write(CALL_USAGE)
    return EXIT_OK
  }
  const req = parsed.value
  const t0 = Date.now()
  // Connected before the request is sent, so that none of its events can be missed.
  let feed: CtiFeed | undefined
  if (req.followEvents) {
    const opened = await openCtiFeed(`${req.root.replace(/^http/, 'ws')}/ws_cti?app_name=cod-call&full_events=true`, req.authorization, 10_000)
    if (!opened.ok) {
      const e = opened.error
      io.stderr.write(e.kind === 'refused' ? `CTI connection refused: HTTP ${e.status} ${e.body}\n` : `CTI connection failed: ${e.message}\n`)
      io.stderr.write('no request was sent (--no-events sends it without following its events)\n')
      return EXIT_PROBLEMS
    }
    feed = opened.feed
  }
  const status = req.statusEvents ? await statusReceiver(t0, io) : undefined
  try {
    const sent = await send(req, status !== undefined ? { status_callback_url: status.url } : {})
    if (!sent.ok) {
      io.stderr.write(`request failed: ${sent.error}\n`)
      return EXIT_PROBLEMS
    }
    const { status: httpStatus, text } = sent.value
    io.stdout.write(`${elapsed(t0)}  HTTP ${httpStatus} ${text.trim()}\n`)
    const uuids = acceptedUuids(httpStatus, text)
    if (uuids.length === 0) return EXIT_PROBLEMS
    const deadline = t0 + req.timeoutMs
    const code = feed === undefined ? EXIT_OK : await follow(feed, uuids, t0, req.timeoutMs, req.raw, io)
    // The last status events are POSTed after the channels are gone (and retried): wait for each
    // leg's completed, within the timeout.
    while (status !== undefined && !status.settled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    if (status !== undefined && !status.settled()) {
      io.stderr.write('timeout: not every leg told its completed status event\n')
      return EXIT_PROBLEMS
    }
    return code
  } finally {
    feed?.close()
    status?.close()
  }
}

/** Prints the request's events until its channels are gone (plus a grace period) or the timeout. */
async function follow(feed: CtiFeed, uuids: readonly string[], t0: number, timeoutMs: number, raw: boolean, io: CliIo): Promise<ExitCode> {
  const GRACE_MS = 2000
  const channels = new RequestChannels(uuids)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const left = deadline - Date.now()
    const wait = channels.over ? Math.min(GRACE_MS, left) : left
    const e = await feed.next(Math.max(0, wait))
    if (e === 'closed') {
      io.stderr.write('the CTI connection closed\n')
      return channels.over ? EXIT_OK : EXIT_PROBLEMS
    }
    if (e === 'timeout') {
      if (channels.over) return EXIT_OK
      io.stderr.write(`timeout: the request's channels had not all ended after ${timeoutMs / 1000} s\n`)
      return EXIT_PROBLEMS
    }
    if (channels.take(e)) io.stdout.write(raw ? `${e.raw}\n` : `${elapsed(t0)}  ${summary(e)}\n`)
  }
}
