/**
 * `cod call`: a test call through a running daemon's API, for an operator or an application
 * developer trying a configuration or the sandbox (cod simulator). It opens a CTI connection
 * with `full_events=true` first (call-events.ts), sends the request, prints the reply, then the
 * request's channel events until its channels are gone, or a timeout.
 */
import type { Operation } from '../origination/plan.js'
import { openCtiFeed, RequestChannels, type ChannelEvent, type CtiFeed } from './call-events.js'
import { EXIT_OK, EXIT_PROBLEMS, parseCommandLine, stringOpt, usageError, type CliIo, type ExitCode } from './io.js'

export const CALL_USAGE = `usage: cod call <operation> --domain D [--token T] [--url http://127.0.0.1:8080] [--prefix /api]
                [--json '{...}' | key=value ... key:=<json> ...] [--timeout 120] [--raw] [--no-events]

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

Example: COD_TOKEN=demo-token-example-test cod call call_user --domain example.test \\
           user_name=alice destination=bob

Exit: 0 the request was accepted and its channels ended; 1 the request was refused (the reply
says why), the events did not end within --timeout, or the daemon was not reached;
2 a wrong command line.
`

const KNOWN = { call_user: true, call_group: true, call_external: true, initiate_call: true } satisfies Record<Operation, true>
const isOperation = (s: string): s is Operation => Object.hasOwn(KNOWN, s)

/** key=value and key:=json pairs into a body; a mistake is named. */
function bodyOf(pairs: readonly string[]): { ok: true; body: Record<string, unknown> } | { ok: false; error: string } {
  const body: Record<string, unknown> = {}
  for (const pair of pairs) {
    const json = /^([^=:]+):=(.*)$/s.exec(pair)
    const text = /^([^=:]+)=(.*)$/s.exec(pair)
    if (json?.[1] !== undefined) {
      try {
        body[json[1]] = JSON.parse(json[2] ?? '')
      } catch {
        return { ok: false, error: `${pair}: the value after ":=" must be JSON` }
      }
    } else if (text?.[1] !== undefined) {
      body[text[1]] = text[2] ?? ''
    } else {
      return { ok: false, error: `${pair}: expected key=value or key:=<json>` }
    }
  }
  return { ok: true, body }
}

const elapsed = (t0: number): string => `+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)

const summary = (e: ChannelEvent): string => {
  const c = e.channel
  const cause = e.event === 'removed' && c.hangup_cause !== null ? `  ${c.hangup_cause}` : ''
  return `${e.event.padEnd(8)} ${c.uuid}  ${String(c.direction).padEnd(8)} ${String(c.state).padEnd(10)} ${c.calling_number ?? '-'} -> ${c.called_number ?? '-'}${cause}`
}

export async function runCall(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseCommandLine(
    argv,
    {
      domain: { type: 'string' },
      token: { type: 'string' },
      url: { type: 'string' },
      prefix: { type: 'string' },
      json: { type: 'string' },
      timeout: { type: 'string' },
      raw: { type: 'boolean' },
      'no-events': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  )
  if (!parsed.ok) return usageError(io, parsed.error, CALL_USAGE)
  const { values, positionals } = parsed.value
  if (values.help === true) {
    io.stdout.write(CALL_USAGE)
    return EXIT_OK
  }
  const [operation, ...pairs] = positionals
  if (operation === undefined || !isOperation(operation)) {
    return usageError(io, operation === undefined ? 'an operation is expected' : `unknown operation "${operation}"`, CALL_USAGE)
  }
  const domain = stringOpt(values.domain)
  const token = stringOpt(values.token) ?? io.env.COD_TOKEN
  if (domain === undefined || token === undefined || token === '') return usageError(io, '--domain and a token (--token or COD_TOKEN) are required', CALL_USAGE)
  const jsonText = stringOpt(values.json)
  let body: Record<string, unknown>
  if (jsonText !== undefined) {
    if (pairs.length > 0) return usageError(io, '--json or key=value pairs, not both', CALL_USAGE)
    let v: unknown
    try {
      v = JSON.parse(jsonText)
    } catch {
      return usageError(io, '--json is not JSON', CALL_USAGE)
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return usageError(io, '--json must be a JSON object', CALL_USAGE)
    body = v as Record<string, unknown>
  } else {
    const b = bodyOf(pairs)
    if (!b.ok) return usageError(io, b.error, CALL_USAGE)
    body = b.body
  }
  const timeoutText = stringOpt(values.timeout) ?? '120'
  const timeoutS = Number(timeoutText)
  if (!/^\d+(\.\d+)?$/.test(timeoutText) || timeoutS <= 0 || timeoutS > 86_400) return usageError(io, '--timeout must be seconds above 0 (at most 86400)', CALL_USAGE)
  let base: URL
  try {
    base = new URL(stringOpt(values.url) ?? 'http://127.0.0.1:8080')
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('scheme')
  } catch {
    return usageError(io, '--url must be an http(s) URL', CALL_USAGE)
  }
  const prefix = (stringOpt(values.prefix) ?? '/api').replace(/\/+$/, '')
  const root = `${base.origin}${base.pathname.replace(/\/+$/, '')}${prefix}`
  const authorization = `Basic ${Buffer.from(`${domain}:${token}`).toString('base64')}`
  const t0 = Date.now()

  const events = values['no-events'] === true ? undefined : await openCtiFeed(`${root.replace(/^http/, 'ws')}/ws_cti?app_name=cod-call&full_events=true`, authorization, 10_000)
  if (events !== undefined && !events.ok) {
    const e = events.error
    io.stderr.write(e.kind === 'refused' ? `CTI connection refused: HTTP ${e.status} ${e.body}\n` : `CTI connection failed: ${e.message}\n`)
    io.stderr.write('no request was sent (--no-events sends it without following its events)\n')
    return EXIT_PROBLEMS
  }
  const feed = events?.feed
  try {
    let status: number
    let text: string
    try {
      const res = await fetch(`${root}/${operation}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
      status = res.status
      text = await res.text()
    } catch (e) {
      io.stderr.write(`request failed: ${(e as Error).message}${(e as { cause?: { message?: string } }).cause?.message !== undefined ? ` (${(e as { cause: { message: string } }).cause.message})` : ''}\n`)
      return EXIT_PROBLEMS
    }
    io.stdout.write(`${elapsed(t0)}  HTTP ${status} ${text.trim()}\n`)
    let uuids: string[] = []
    try {
      const reply = JSON.parse(text) as { result_code?: unknown; uuids?: unknown }
      if (status === 200 && reply.result_code === 0 && Array.isArray(reply.uuids)) uuids = reply.uuids.filter((u): u is string => typeof u === 'string')
    } catch {
      // not JSON: refused below
    }
    if (uuids.length === 0) return EXIT_PROBLEMS
    if (feed === undefined) return EXIT_OK
    return await follow(feed, uuids, t0, timeoutS * 1000, values.raw === true, io)
  } finally {
    feed?.close()
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
