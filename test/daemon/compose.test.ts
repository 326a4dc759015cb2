/**
 * The daemon's parts start in one written order and stop in its reverse (src/util/parts.ts,
 * src/daemon.ts): first the runner alone, on parts that log their start and stop; then the whole
 * daemon over the simulator, by its debug log, for a full start and stop and for a start that
 * fails half-way (a port taken), which stops what it had started, last first, and so leaves the
 * journal's folder free for the next start.
 */
import { createServer, type Server } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import { startDaemon } from '../../src/daemon.js'
import { createLogger, silentLogger } from '../../src/util/logger.js'
import { forwardPort, Parts } from '../../src/util/parts.js'
import { err, ok } from '../../src/util/result.js'
import { tempDir } from '../cli/run-cod.js'

t.setTimeout(60_000)

/** A part that logs its start and its stop, and offers `{ [name]: name }`. */
const logged = (log: string[], name: string, opts: { failStop?: boolean } = {}) => () => {
  log.push(`start ${name}`)
  return ok({
    offers: { [name]: name },
    stop: async () => {
      await new Promise((r) => setImmediate(r))
      log.push(`stop ${name}`)
      if (opts.failStop === true) throw new Error(`${name} cannot stop`)
    },
  })
}

t.test('the parts stop in the reverse of their start order, once', async (t) => {
  const log: string[] = []
  const parts = Parts.list()
    .then('a', logged(log, 'a'))
    .then('b', ({ a }) => {
      log.push(`start b from ${String(a)}`)
      return ok({ offers: { b: 'b' } })
    })
    .then('c', logged(log, 'c'))
    .then('d', logged(log, 'd'))
  const started = await parts.start(silentLogger())
  if (!started.ok) throw new Error(started.error.join())
  t.same(started.value.made, { a: 'a', b: 'b', c: 'c', d: 'd' })
  await Promise.all([started.value.stop(), started.value.stop()])
  await started.value.stop()
  // b has nothing to stop; the others stop last first, each once.
  t.same(log, ['start a', 'start b from a', 'start c', 'start d', 'stop d', 'stop c', 'stop a'])
})

t.test('a part refusing to start stops the parts started, in reverse, and the rest never start', async (t) => {
  const log: string[] = []
  const started = await Parts.list()
    .then('a', logged(log, 'a'))
    .then('b', logged(log, 'b'))
    .then('c', () => err(['c: refused']))
    .then('d', logged(log, 'd'))
    .start(silentLogger())
  t.same(started, { ok: false, error: ['c: refused'] })
  t.same(log, ['start a', 'start b', 'stop b', 'stop a'])
})

t.test('a part throwing stops the parts started, in reverse, then the error goes on', async (t) => {
  const log: string[] = []
  const boom = new Error('boom')
  const starting = Parts.list()
    .then('a', logged(log, 'a'))
    .then('b', logged(log, 'b'))
    .then('c', async () => {
      await Promise.resolve()
      throw boom
    })
    .start(silentLogger())
  await t.rejects(starting, boom)
  t.same(log, ['start a', 'start b', 'stop b', 'stop a'])
})

t.test('a stop that fails does not keep the parts before it running; the stop fails with it', async (t) => {
  const log: string[] = []
  const started = await Parts.list()
    .then('a', logged(log, 'a'))
    .then('b', logged(log, 'b', { failStop: true }))
    .then('c', logged(log, 'c'))
    .start(silentLogger())
  if (!started.ok) throw new Error(started.error.join())
  await t.rejects(started.value.stop(), /b cannot stop/)
  t.same(log, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a'])
})

t.test('two parts offering one name is a mistake in the list', async (t) => {
  const log: string[] = []
  const starting = Parts.list().then('a', logged(log, 'a')).then('again', logged(log, 'a')).start(silentLogger())
  await t.rejects(starting, /part again offers a, already offered by an earlier part/)
  t.same(log, ['start a', 'start a', 'stop a', 'stop a'])
})

t.test('a forward port answers as before until the later part binds it', async (t) => {
  const port = forwardPort((_d: string) => 0)
  t.equal(port.call('x'), 0)
  port.bind((d) => d.length)
  t.equal(port.call('xyz'), 3)
})

/** The daemon's debug log: which parts started and stopped, in order. */
function partLog() {
  const started: string[] = []
  const stopped: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line === '') continue
        const rec = JSON.parse(line) as { msg?: string; part?: string }
        if (rec.msg === 'part started' && rec.part !== undefined) started.push(rec.part)
        if (rec.msg === 'part stopped' && rec.part !== undefined) stopped.push(rec.part)
      }
      done()
    },
  })
  return { started, stopped, logger: createLogger('debug', sink) }
}

/** A port taken by someone else on 127.0.0.1. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, server }
}

const DAEMON_PARTS = ['ui', 'journal', 'recordings', 'api listener', 'xml_curl listener', 'metrics', 'simulator', 'pbx', 'channels', 'call history', 'outbound transports', 'cluster', 'callbacks', 'engine', 'recording follower', 'call notices', 'ivr', 'cti', 'xml_curl documents', 'api']
// Parts with nothing to undo (ui, the cluster without a `cluster` section, xml_curl documents: its listener closes it).
const STOPPED = ['api', 'cti', 'ivr', 'call notices', 'recording follower', 'engine', 'callbacks', 'outbound transports', 'call history', 'channels', 'pbx', 'simulator', 'metrics', 'xml_curl listener', 'api listener', 'recordings', 'journal']

t.test('the daemon starts its parts in the written order and stops them in the reverse', async (t) => {
  const log = partLog()
  const journalDir = tempDir(t, 'compose-journal')
  const started = await startDaemon({ configFile: 'conf/daemon.yaml', logger: log.logger, httpPort: 0, simulatorPort: 0, journalDir })
  if (!started.ok) throw new Error(started.error.join('\n'))
  t.same(log.started, DAEMON_PARTS)
  await started.value.stop()
  t.same(log.stopped, STOPPED)
  t.same(log.stopped, [...DAEMON_PARTS].reverse().filter((p) => STOPPED.includes(p)))
})

t.test('a start refused half-way (xml_curl port taken) stops what it started, last first', async (t) => {
  const taken = await takenPort()
  t.teardown(() => taken.server.close())
  const journalDir = tempDir(t, 'compose-journal')
  const log = partLog()
  const refused = await startDaemon({ configFile: 'conf/daemon.yaml', logger: log.logger, httpPort: 0, xmlCurlPort: taken.port, simulatorPort: 0, journalDir })
  t.equal(refused.ok, false)
  if (!refused.ok) t.match(refused.error.join('\n'), /^xml_curl: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/)
  t.same(log.started, ['ui', 'journal', 'recordings', 'api listener'])
  t.same(log.stopped, ['api listener', 'recordings', 'journal'])
  // The journal's folder was let go: the next start on it is not refused as "in use".
  const again = await startDaemon({ configFile: 'conf/daemon.yaml', logger: silentLogger(), httpPort: 0, simulatorPort: 0, journalDir })
  if (!again.ok) throw new Error(again.error.join('\n'))
  await again.value.stop()
})

t.test('a start that throws half-way (simulator port taken) stops what it started, then throws', async (t) => {
  const taken = await takenPort()
  t.teardown(() => taken.server.close())
  const journalDir = tempDir(t, 'compose-journal')
  const log = partLog()
  await t.rejects(startDaemon({ configFile: 'conf/daemon.yaml', logger: log.logger, httpPort: 0, simulatorPort: taken.port, journalDir }), /EADDRINUSE/)
  t.same(log.started, ['ui', 'journal', 'recordings', 'api listener', 'xml_curl listener', 'metrics'])
  t.same(log.stopped, ['metrics', 'xml_curl listener', 'api listener', 'recordings', 'journal'])
  const again = await startDaemon({ configFile: 'conf/daemon.yaml', logger: silentLogger(), httpPort: 0, simulatorPort: 0, journalDir })
  if (!again.ok) throw new Error(again.error.join('\n'))
  await again.value.stop()
})
