/**
 * `npm run demo`: the whole flow on the built-in simulator, no FreeSWITCH needed.
 * Starts the daemon with the shipped configuration, places a call_user (alice, whose first
 * terminal answers after 1 s, connected to bob), receives the result callback on a local
 * receiver and prints request, reply, FreeSWITCH events and callback as they happen.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { startDaemon } from './daemon.js'
import { createLogger } from './util/logger.js'

const { values } = parseArgs({ options: { config: { type: 'string', default: 'conf/daemon.yaml' } } })
const t0 = Date.now()
const say = (what: string, detail = '') =>
  process.stdout.write(`${`+${((Date.now() - t0) / 1000).toFixed(2)}s`.padStart(8)}  ${what}${detail === '' ? '' : `  ${detail}`}\n`)
const short = (uuid: string | undefined) => (uuid === undefined ? '-' : uuid.slice(0, 8))

// The receiver an application server would run for callback_url.
const receiver = createServer()
const callbackArrived = new Promise<void>((resolveArrived) => {
  receiver.on('request', (req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      say('callback received', `${body}  (X-Delivery-Id ${String(req.headers['x-delivery-id'])}, signed: ${req.headers['x-signature'] !== undefined})`)
      res.writeHead(204).end()
      resolveArrived()
    })
  })
})
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/result`

// Ports 0: the demo must not collide with a daemon already running on the shipped ports.
// The demo leaves nothing behind: its journal lives in a temporary folder.
const journalDir = mkdtempSync(join(tmpdir(), 'cod-demo-journal-'))
const started = await startDaemon({
  journalDir,
  configFile: values.config ?? 'conf/daemon.yaml',
  logger: createLogger('warn'),
  httpPort: 0,
  simulatorPort: 0,
})
if (!started.ok) {
  process.stderr.write(`configuration refused:\n${started.error.join('\n')}\n`)
  process.exit(2)
}
const daemon = started.value
say('daemon started', `API ${daemon.baseUrl}, FreeSWITCH documents ${daemon.xmlCurlUrl} (FreeSWITCH simulator on an ESL socket)`)

daemon.pbx.onEvent((e) => {
  const name = e['Event-Name']
  if (name === undefined) return
  if (name === 'BACKGROUND_JOB') {
    // The daemon's own health probes and resync reads are noise here; show the call's job (its
    // sofia_contact runs with `api`: an instant command has no job).
    const command = e['Job-Command'] ?? ''
    if (command !== 'originate') return
    return say(`  event ${name}`, `${command} -> ${JSON.stringify(e['_body'] ?? '')}`)
  }
  if (!['CHANNEL_CREATE', 'CHANNEL_PROGRESS', 'CHANNEL_ANSWER', 'CHANNEL_BRIDGE', 'CHANNEL_HANGUP', 'CHANNEL_PARK'].includes(name)) return
  const cause = e['Hangup-Cause'] === undefined ? '' : ` cause=${e['Hangup-Cause']}`
  say(`  event ${name}`, `leg ${short(e['Unique-ID'])} ${e['Channel-Name'] ?? ''}${cause}`)
})

for (let i = 0; i < 50 && !daemon.pbx.isConnected(); i++) await new Promise((r) => setTimeout(r, 100))

const request = { user_name: 'alice', destination: 'bob', calling_name: 'Demo call', callback_url: callbackUrl }
say('POST /api/call_user', JSON.stringify(request))
const reply = await fetch(`${daemon.baseUrl}/api/call_user`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from('example.test:demo-token-example-test').toString('base64')}`,
  },
  body: JSON.stringify(request),
})
say(`reply ${reply.status}`, await reply.text())

const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000).unref())
const outcome = await Promise.race([callbackArrived.then(() => 'ok' as const), timeout])
if (outcome === 'timeout') say('no callback within 20 s')
// Let the connected call show its bridge before stopping.
await new Promise((r) => setTimeout(r, 3000))
say('stopping')
await daemon.stop()
rmSync(journalDir, { recursive: true, force: true })
receiver.close()
process.exit(outcome === 'ok' ? 0 : 1)
