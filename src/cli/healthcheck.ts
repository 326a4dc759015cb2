/**
 * `cod healthcheck`: the container image's HEALTHCHECK (Dockerfile). It asks `GET /healthz` of
 * the API listener that the daemon's own file names (http.host, http.port; https when http.tls
 * is set), so the check follows the configured port instead of repeating it in the Dockerfile.
 * The file is the daemon's: --config, else $COD_CONFIG (the image sets it, and its CMD starts
 * the daemon on it), else conf/daemon.yaml as for `cod start`.
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { urlHostOf } from '../config/endpoints.js'
import { formatProblem, loadConfig } from '../config/load.js'
import { EXIT_OK, EXIT_PROBLEMS, parseOrExit, stringOpt, usageError, type CliIo, type ExitCode } from './io.js'

const HEALTHCHECK_USAGE = `usage: cod healthcheck [--config FILE] [--timeout-ms 2500]

Asks the running daemon's GET /healthz on the API listener its configuration names
(http.host, http.port; a wildcard host is asked on loopback; https when http.tls is set, its
certificate not checked: this is the daemon's own listener). The container image's HEALTHCHECK.

  --config, -c   the daemon's file (default: $COD_CONFIG, else conf/daemon.yaml)
  --timeout-ms   how long to wait for the answer (default 2500)

Exit: 0 /healthz answered 200; 1 anything else (503 while the link to FreeSWITCH is down, no
answer in time, a configuration that cannot be read); 2 a wrong command line.
`

/** The status code of GET url, or why there was none. */
function getStatus(url: URL, timeoutMs: number): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = request(url, { method: 'GET', timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
      res.resume()
      resolve({ status: res.statusCode ?? 0 })
    })
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.once('error', (e) => resolve({ error: e.message }))
    req.end()
  })
}

export async function runHealthcheck(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const parsed = parseOrExit(io, HEALTHCHECK_USAGE, argv, { config: { type: 'string', short: 'c' }, 'timeout-ms': { type: 'string' } }, false)
  if (!parsed.ok) return parsed.error
  const timeoutMs = Number(stringOpt(parsed.value.values['timeout-ms']) ?? '2500')
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) return usageError(io, '--timeout-ms must be a positive whole number', HEALTHCHECK_USAGE)
  const configFile = stringOpt(parsed.value.values.config) ?? io.env.COD_CONFIG ?? 'conf/daemon.yaml'
  const loaded = await loadConfig(configFile)
  if (!loaded.ok) {
    for (const p of loaded.error) io.stderr.write(`${formatProblem(p)}\n`)
    return EXIT_PROBLEMS
  }
  const http = loaded.value.daemon.http
  const url = new URL(`${http.tls !== undefined ? 'https' : 'http'}://${urlHostOf(http.host)}:${http.port}/healthz`)
  const answer = await getStatus(url, timeoutMs)
  if ('error' in answer) {
    io.stderr.write(`${url.href}: ${answer.error}\n`)
    return EXIT_PROBLEMS
  }
  io.stdout.write(`${url.href}: ${answer.status}\n`)
  return answer.status === 200 ? EXIT_OK : EXIT_PROBLEMS
}
