/**
 * What esl-lite 3.2.0's client does that the daemon cannot live with, shown on esl-lite itself:
 * the reproducers of the notes for esl-lite's author (docs/esl-lite.md). The daemon's own session
 * (src/pbx/esl-session.ts) does otherwise, and its tests say so: connection.test.ts ("given up
 * before its turn came", "never written again on the next socket", api()), esl-framing.test.ts
 * (the split blank line, with esl-lite's parser). Should one of these fail after an upgrade,
 * esl-lite changed there: see docs/esl-lite.md before relying on it.
 */
import t, { type Test } from 'tap'
import { FreeSwitchClient } from 'esl-lite'
import { Simulator } from '../../src/sim/index.js'
import { silentLogger } from '../../src/util/logger.js'
import { startMiniEsl } from './mini-esl.js'
import { waitFor } from '../support/wait.js'

/** esl-lite's client with its protected send() reachable, as its documentation says to do. */
class RawClient extends FreeSwitchClient {
  command(text: string, timeoutMs: number) {
    return this.send(text, {}, undefined, timeoutMs)
  }
}

async function clientOf(t: Test, port: number): Promise<RawClient> {
  const client = new RawClient({ host: '127.0.0.1', port, password: 'ClueCon', logger: silentLogger() })
  t.teardown(() => client.end())
  // Authenticated and subscribed: a command gets its reply.
  const r = await client.command('event json BACKGROUND_JOB', 4000)
  if (r instanceof Error) throw r
  return client
}

t.test('a command send() timed out on is still written, when its turn comes', async (t) => {
  const esl = await startMiniEsl()
  t.teardown(() => esl.close())
  const client = await clientOf(t, esl.port)
  esl.freeze()
  const first = client.command('bgapi status', 4000)
  const second = await client.command('bgapi originate sofia/internal/second &park()', 100)
  t.equal(second instanceof Error ? second.name : 'answered', 'FreeSwitchTimeoutError', 'the caller was told it timed out')
  esl.thaw()
  await first
  await waitFor('the second written', () => esl.received.includes('bgapi originate sofia/internal/second &park()'), 1000).catch(() => {})
  t.ok(esl.received.includes('bgapi originate sofia/internal/second &park()'), 'written after all: an originate refused to its caller may run')
})

t.test('a command written on a socket that closed is written again on the next socket', async (t) => {
  const esl = await startMiniEsl()
  t.teardown(() => esl.close())
  const client = await clientOf(t, esl.port)
  esl.stall = (c) => c.startsWith('originate')
  void client.command('bgapi originate sofia/internal/x &park()', 4000)
  await waitFor('written', () => esl.received.some((l) => l.startsWith('bgapi originate')))
  esl.dropAll()
  await waitFor('written again', () => esl.received.filter((l) => l.startsWith('bgapi originate')).length === 2, 2000).catch(() => {})
  t.equal(esl.received.filter((l) => l.startsWith('bgapi originate')).length, 2, 'twice: one originate may place two calls')
})

t.test("an `api` command's reply (api/response) never reaches it", async (t) => {
  const sim = new Simulator({ domains: [], password: 'ClueCon' })
  const port = await sim.listen(0)
  t.teardown(() => sim.close())
  const client = await clientOf(t, port)
  const r = await client.command('api status', 500)
  t.equal(r instanceof Error ? r.name : 'answered', 'FreeSwitchTimeoutError', 'it waits until its timeout')
  t.ok(client.stats.apiResponses >= 1n, 'its reply came, and was taken for unexpected')
  t.ok(client.stats.authRequest >= 2n, 'and esl-lite dropped the socket for it (its read loop breaks on it), and wrote the command again on the next')
})
