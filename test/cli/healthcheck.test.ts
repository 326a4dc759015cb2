/**
 * `cod healthcheck` (the image's HEALTHCHECK): it asks /healthz where the daemon's file puts the
 * API listener, so a changed http.port is followed; 200 is healthy, anything else is not.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { cod, codHere, ROOT, tempDir } from './run-cod.js'

// Child processes on a loaded 2-core machine: generous, still bounded.
t.setTimeout(120_000)

/** A stand-in for the daemon's API listener: /healthz answers `status`; its port. */
async function healthz(t: Test, status: number): Promise<number> {
  const server: Server = createServer((req, res) => {
    res.statusCode = req.url === '/healthz' ? status : 404
    res.end()
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((r) => server.once('listening', r))
  t.teardown(() => new Promise<void>((r) => server.close(() => r())))
  return (server.address() as AddressInfo).port
}

/** The shipped configuration with the API listener at `host`:`port`; the file's path. */
function configAt(t: Test, host: string, port: number): string {
  const dir = tempDir(t, 'health')
  const file = join(dir, 'daemon.yaml')
  cpSync(join(ROOT, 'conf/domains'), join(dir, 'domains'), { recursive: true })
  const shipped = readFileSync(join(ROOT, 'conf/daemon.yaml'), 'utf8')
  const edited = shipped.replace('http: { host: 127.0.0.1, port: 8080,', `http: { host: ${host}, port: ${port},`)
  if (edited === shipped) throw new Error('conf/daemon.yaml: its http line changed; update this test')
  // xml_curl on any free port: it must differ from http.port.
  writeFileSync(file, edited.replace('port: 8081,', 'port: 0,'))
  return file
}

t.test('200 on the configured port: healthy (exit 0), in a child process as the image runs it', async (t) => {
  const port = await healthz(t, 200)
  const r = await cod(['healthcheck', '--config', configAt(t, '127.0.0.1', port)])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, `http://127.0.0.1:${port}/healthz: 200\n`)
})

t.test('the file from $COD_CONFIG (the image sets it); a wildcard host is asked on loopback', async (t) => {
  const port = await healthz(t, 200)
  const r = await codHere(['healthcheck'], { env: { COD_CONFIG: configAt(t, '0.0.0.0', port) } })
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, `http://127.0.0.1:${port}/healthz: 200\n`)
})

t.test('503 (the link to FreeSWITCH down), no listener, an unreadable file: unhealthy (exit 1)', async (t) => {
  const down = await healthz(t, 503)
  const r503 = await codHere(['healthcheck', '--config', configAt(t, '127.0.0.1', down)])
  t.equal(r503.code, 1)
  t.equal(r503.stdout, `http://127.0.0.1:${down}/healthz: 503\n`)
  // A port nothing listens on: one a server has just given up.
  const closing = createServer()
  closing.listen(0, '127.0.0.1')
  await new Promise<void>((r) => closing.once('listening', r))
  const free = (closing.address() as AddressInfo).port
  await new Promise<void>((r) => closing.close(() => r()))
  const none = await codHere(['healthcheck', '--config', configAt(t, '127.0.0.1', free)])
  t.equal(none.code, 1)
  t.match(none.stderr, `http://127.0.0.1:${free}/healthz: connect ECONNREFUSED`)
  const missing = await codHere(['healthcheck', '--config', join(tempDir(t, 'health'), 'nope.yaml')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /nope\.yaml: cannot read: ENOENT/)
})

t.test('usage: an unknown option, a bad --timeout-ms (exit 2)', async (t) => {
  t.equal((await codHere(['healthcheck', '--port', '1'])).code, 2)
  const bad = await codHere(['healthcheck', '--timeout-ms', 'soon'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--timeout-ms must be a positive whole number/)
})
