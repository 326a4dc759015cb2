/**
 * How far one call_user travels through the daemon's code: the functions of src/ that run, and
 * the files they live in, from the HTTP request to the result callback's arrival, on the built-in
 * simulator. A measure of structure, not of speed (issue 27: "one object per request"): V8's
 * precise coverage counts every function call between two snapshots; the simulator's own code
 * (src/sim/) is left out, since it stands in for FreeSWITCH.
 *
 *   node --import tsx bench/call-path.ts [--calls N]
 *
 * One call warms up first (lazy compilation, first-use paths); the figures are of the calls that
 * follow, per call. Background work in the same window (health probes, metrics) is included and is
 * the same for any version of the engine, so two versions compare fairly in the same conditions.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startDaemon } from '../src/daemon.js'
import { createLogger } from '../src/util/logger.js'

const { values } = parseArgs({ options: { calls: { type: 'string', default: '5' } } })
const calls = Math.max(1, Number(values.calls))
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..')

let arrived: (() => void) | undefined
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.end('ok')
    arrived?.()
  })
})
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/result`

const journalDir = mkdtempSync(join(tmpdir(), 'cod-call-path-'))
const started = await startDaemon({ journalDir, configFile: 'conf/daemon.yaml', logger: createLogger('warn'), httpPort: 0, simulatorPort: 0 })
if (!started.ok) throw new Error(started.error.join('\n'))
const daemon = started.value
for (let i = 0; i < 50 && !daemon.pbx.isConnected(); i++) await new Promise((r) => setTimeout(r, 100))

const oneCall = async (): Promise<void> => {
  const result = new Promise<void>((r) => (arrived = r))
  const reply = await fetch(`${daemon.baseUrl}/api/call_user`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`,
    },
    body: JSON.stringify({ user_name: 'alice', destination: 'bob', callback_url: callbackUrl }),
  })
  if (reply.status !== 200) throw new Error(`call_user answered ${reply.status}: ${await reply.text()}`)
  await result
}

await oneCall()
const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
await session.post('Profiler.takePreciseCoverage') // counts from here
for (let i = 0; i < calls; i++) await oneCall()
const { result } = await session.post('Profiler.takePreciseCoverage')
await session.post('Profiler.stopPreciseCoverage')
session.disconnect()

const functions = new Map<string, number>()
const files = new Map<string, number>()
for (const script of result) {
  if (!script.url.startsWith('file://')) continue
  const file = relative(root, fileURLToPath(script.url))
  if (!file.startsWith('src/') || file.startsWith('src/sim/')) continue
  for (const fn of script.functions) {
    const count = fn.ranges[0]?.count ?? 0
    if (count === 0) continue
    const name = `${file}:${fn.functionName || '(anonymous)'}@${fn.ranges[0]?.startOffset ?? 0}`
    functions.set(name, (functions.get(name) ?? 0) + count)
    files.set(file, (files.get(file) ?? 0) + count)
  }
}
const perCall = (n: number): string => (n / calls).toFixed(1)
const calledTotal = [...functions.values()].reduce((a, b) => a + b, 0)
const origination = [...files].filter(([f]) => f.startsWith('src/origination/'))
process.stdout.write(
  [
    `one call_user, HTTP request to result callback, ${calls} calls measured after one warm-up (src/sim excluded):`,
    `  files entered:                 ${files.size}`,
    `  distinct functions run:        ${functions.size}`,
    `  function calls per call:       ${perCall(calledTotal)}`,
    `  src/origination files entered: ${origination.length}`,
    `  src/origination calls per call: ${perCall(origination.reduce((a, [, n]) => a + n, 0))}`,
    ...origination.sort(([, a], [, b]) => b - a).map(([f, n]) => `    ${f.padEnd(44)} ${perCall(n)}`),
    '',
  ].join('\n'),
)
await daemon.stop()
receiver.close()
rmSync(journalDir, { recursive: true, force: true })
