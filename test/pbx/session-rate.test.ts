/**
 * FreeSWITCH's sessions-per-second as the daemon reads it (src/pbx/session-rate.ts): `fsctl sps`
 * at every connection, parsed from the captured answer; a reading that fails keeps the last one.
 */
import t from 'tap'
import { parseSessionsPerSecond } from '../../src/pbx/replies.js'
import { watchSessionRate } from '../../src/pbx/session-rate.js'
import { ok, type Result } from '../../src/util/result.js'
import type { PbxError } from '../../src/pbx/types.js'
import { silentLogger } from '../../src/util/logger.js'
import { FakePbx, flush } from '../support/fake-pbx.js'

t.test('the answer of fsctl sps (35-sessions-per-second)', async (t) => {
  t.equal(parseSessionsPerSecond('+OK sessions per second: 30\n'), 30)
  t.equal(parseSessionsPerSecond('+OK sessions per second: 5\n'), 5)
  t.equal(parseSessionsPerSecond('-USAGE: [shutdown]\n'), undefined, 'an older simulator, or another text')
  t.equal(parseSessionsPerSecond('+OK\n'), undefined)
})

t.test('read at every connection; a failed reading keeps the last one', async (t) => {
  const pbx = new FakePbx()
  let answer: Result<string, PbxError> = ok('+OK sessions per second: 30\n')
  pbx.reply = () => answer
  const rate = watchSessionRate(pbx, 1000, silentLogger())
  await flush()
  t.equal(rate.current(), 30, 'read at once when already connected')
  t.same(pbx.commands, ['fsctl sps'])
  answer = ok('+OK sessions per second: 10\n')
  pbx.reconnect()
  await flush()
  t.equal(rate.current(), 10, 'read again at the next connection')
  answer = { ok: false, error: { kind: 'timeout' } }
  pbx.reconnect()
  await flush()
  t.equal(rate.current(), 10, 'no answer: the last reading stands')
  rate.stop()
  pbx.reconnect()
  await flush()
  t.equal(pbx.commands.length, 3, 'stopped: no more readings')
})

t.test('nothing read before FreeSWITCH answered once', async (t) => {
  const pbx = new FakePbx()
  pbx.reply = () => ok('-ERR no reply\n')
  const rate = watchSessionRate(pbx, 1000, silentLogger())
  await flush()
  t.equal(rate.current(), undefined, 'the engine then assumes vanilla 30 (engine.ts)')
  rate.stop()
})
