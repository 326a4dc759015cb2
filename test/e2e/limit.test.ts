/**
 * Issue 11 item 6, "every leg inside the limit": a burst of two-leg (and three-leg) calls at the
 * shipped domain's channel_limit (20, conf/domains/example.test.yaml), through the whole daemon
 * and the simulator, which fetches the dialplan from the daemon and bridges the destination as
 * FreeSWITCH would. An independent Event Socket client of the test's own (raw TCP, no daemon
 * code) counts the switch's live channels at every CHANNEL_CREATE / CHANNEL_HANGUP, the way the
 * daemon's channel limit counts them (docs/engine.md "Channel limit"); its peak must never pass
 * the limit.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { startDaemon, type Daemon } from '../../src/daemon.js'
import { silentLogger } from '../../src/util/logger.js'
import { recordReply, DEMO_AUTH } from './harness.js'
import { waitFor as waitForCondition } from '../support/wait.js'

const LIMIT = 20

/** Counts live channels from the switch's own events (plain Content-Length framing of mod_event_socket). */
class ChannelObserver {
  readonly live = new Set<string>()
  peak = 0
  ready = false
  private buf = Buffer.alloc(0)
  private readonly socket: net.Socket

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.on('error', () => undefined)
    this.socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk])
      for (;;) {
        const end = this.buf.indexOf('\n\n')
        if (end < 0) return
        const head = this.buf.subarray(0, end).toString()
        const length = Number(/^Content-Length: (\d+)$/m.exec(head)?.[1] ?? '0')
        if (this.buf.length < end + 2 + length) return
        const body = this.buf.subarray(end + 2, end + 2 + length).toString()
        this.buf = this.buf.subarray(end + 2 + length)
        this.onFrame(head, body)
      }
    })
  }

  private onFrame(head: string, body: string): void {
    if (head.includes('Content-Type: auth/request')) {
      this.socket.write('auth ClueCon\n\nevent json CHANNEL_CREATE CHANNEL_HANGUP\n\n')
    } else if (head.includes('Reply-Text: +OK event listener')) {
      this.ready = true
    } else if (head.includes('Content-Type: text/event-json')) {
      const ev = JSON.parse(body) as Record<string, string>
      const uuid = ev['Unique-ID'] ?? ''
      if (ev['Event-Name'] === 'CHANNEL_CREATE') this.live.add(uuid)
      else this.live.delete(uuid)
      this.peak = Math.max(this.peak, this.live.size)
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

async function freePort(): Promise<number> {
  const s = net.createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

const waitFor = (what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> => waitForCondition(what, probe, timeoutMs, 20)

let daemon: Daemon
let observer: ChannelObserver
t.before(async () => {
  const port = await freePort()
  const journalDir = mkdtempSync(join(tmpdir(), 'cod-e2e-journal-'))
  t.teardown(() => rmSync(journalDir, { recursive: true, force: true }))
  const started = await startDaemon({ configFile: 'conf/daemon.yaml', journalDir, logger: silentLogger(), httpPort: 0, simulatorPort: port, simulatorTimeScale: 0.05 })
  if (!started.ok) throw new Error(started.error.join('\n'))
  daemon = started.value
  observer = new ChannelObserver(port)
  await waitFor('the ESL connections', () => daemon.pbx.isConnected() && observer.ready)
})
t.teardown(async () => {
  observer.close()
  await daemon.stop()
})

const post = async (operation: string, body: unknown) => {
  const res = await fetch(`${daemon.baseUrl}/api/${operation}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: DEMO_AUTH },
    body: JSON.stringify(body),
  })
  const reply = (await res.json()) as { uuids?: string[]; error?: { id: string } }
  recordReply(operation, res, reply, body)
  return { status: res.status, body: reply }
}

/** Hangs every call up from the far end and waits until the switch has no channel left. */
async function hangUpAll(): Promise<void> {
  const sim = daemon.simulator
  for (const c of sim?.liveChannels() ?? []) sim?.remoteHangup(c.uuid)
  await waitFor('no channel left', () => observer.live.size === 0 && (sim?.liveChannels().length ?? 0) === 0)
}

t.test('a burst of two-leg calls at channel_limit 20: 10 admitted, never more than 20 live', async (t) => {
  observer.peak = 0
  // call_user: bob's one terminal, then (answered) a bridge to the destination number: 2 channels each.
  const replies = await Promise.all(
    Array.from({ length: 16 }, (_, i) => post('call_user', { user_name: 'bob', destination: `03200000${String(i).padStart(2, '0')}` })),
  )
  const admitted = replies.filter((r) => r.status === 200)
  // Every admitted call answers and is bridged.
  await waitFor('every call bridged', () => observer.live.size === 2 * admitted.length)
  t.ok(observer.peak <= LIMIT, `peak ${observer.peak} <= ${LIMIT}`)
  t.equal(admitted.length, LIMIT / 2, 'each request reserves its destination leg too')
  t.same(
    replies.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error?.id]),
    Array(16 - LIMIT / 2).fill([429, 'channel_limit_reached']),
  )
  await new Promise((r) => setTimeout(r, 200))
  t.equal(observer.live.size, LIMIT, 'the switch is exactly at the limit')
  const more = await post('call_user', { user_name: 'bob', destination: '0320009999' })
  t.same([more.status, more.body.error?.id], [429, 'channel_limit_reached'], 'at the limit: refused')
  t.ok(observer.peak <= LIMIT, `peak ${observer.peak} <= ${LIMIT}`)
  await hangUpAll()
  // Every slot comes back once the calls ended.
  const again = await post('call_user', { user_name: 'bob', destination: '0320008888' })
  t.equal(again.status, 200, 'slots released when the calls end')
  await waitFor('bridged', () => observer.live.size === 2)
  await hangUpAll()
})

t.test('a user destination holds one leg per registered terminal (alice has two): 6 of 10 admitted', async (t) => {
  observer.peak = 0
  const replies = await Promise.all(
    Array.from({ length: 10 }, (_, i) => post('call_external', { target: `03300000${String(i).padStart(2, '0')}`, destination: 'alice' })),
  )
  const codes = replies.map((r) => r.status)
  const admitted = codes.filter((s) => s === 200).length
  // Alice's first terminal answers, the second one loses the race; the answered calls stay up.
  await waitFor('every call bridged to alice', () => (daemon.simulator?.liveChannels().filter((c) => /alice@/.test(c.name) && c.bridgedTo !== undefined).length ?? 0) === admitted)
  t.ok(observer.peak <= LIMIT, `peak ${observer.peak} <= ${LIMIT}`)
  t.equal(admitted, 6, '3 channels each: the target, and both of alice\'s terminals')
  t.equal(codes.filter((s) => s === 429).length, 4)
  await hangUpAll()
})
