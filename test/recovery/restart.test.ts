/**
 * Recovery at start, in process (startDaemon on the journal folder an earlier run left): the
 * earlier run is played by the test itself, exactly as the daemon would have done it (its
 * journal records through openJournal, its originates and hangup hooks through pbx/commands.ts
 * over the event socket), so every case is deterministic:
 *
 * (a) a call still ringing: adopted, answered, bridged to its destination, result 0;
 * (b) a call that ended while no daemon ran: its true outcome from the leg's record;
 * (c) no trace in FreeSWITCH: outcome_unknown;
 * (d) a result already journaled: sent by the dispatcher once, not reported again by recovery;
 * then a stop and a start on the same folder report nothing more: exactly one result each.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { openJournal } from '../../src/journal/index.js'
import { CHANNEL_VARS, ROUTE_EXTENSION } from '../../src/pbx/channel-vars.js'
import * as commands from '../../src/pbx/commands.js'
import { connectPbx } from '../../src/pbx/connection.js'
import { legRecordSlot } from '../../src/pbx/leg-record.js'
import { silentLogger } from '../../src/util/logger.js'
import { acceptedBodies, receiver, sleep, waitFor } from '../faults/harness/in-process.js'
import { recoveryRig } from './harness.js'
import { RECOVERY_STARTS } from '../../src/origination/recovery.js'

t.setTimeout(90_000)

const DOMAIN = 'fault.test'
const USERS = [
  // ×0.1: rings 3 s, long enough for the daemon to start and adopt it.
  { id: '11', name: 'slow', extension: '1011', password: 'slow-sip-secret', sim: { terminals: [{ answer_after: 30 }] } },
]

t.test('start on an earlier run\'s journal: adopted, read from records, unknown, already journaled; once each', async (t) => {
  const rig = await recoveryRig(t, USERS)
  const rx = await receiver(t)

  // The earlier run: its link to FreeSWITCH, its journal.
  const pbx = connectPbx({ host: '127.0.0.1', port: rig.relay.port, password: 'ClueCon', logger: silentLogger(), commandTimeoutMs: 2000 })
  t.teardown(() => pbx.close())
  await waitFor('the earlier run connected', () => pbx.isConnected())
  const journal = await openJournal({ dir: rig.journalDir, logger: silentLogger() })
  if (!journal.ok) throw new Error(journal.error)

  /** Places one originate as the daemon does (cod_* variables, the leg's records) and journals the request. */
  const place = async (user: string, destinationUserId: string): Promise<{ requestId: string; uuid: string }> => {
    const requestId = randomUUID()
    const uuid = randomUUID()
    const lookup = commands.sofiaContact(user, DOMAIN)
    if (!lookup.ok) throw new Error('sofia_contact')
    const contact = await pbx.bgapi(lookup.value, 2000)
    if (!contact.ok) throw new Error('sofia_contact')
    const record = legRecordSlot(DOMAIN, requestId, uuid)
    const cmd = commands.originate({
      legs: [{ uuid, endpoint: { kind: 'contact', contact: contact.value.trim() }, record }],
      vars: {
        [CHANNEL_VARS.requestId]: requestId,
        [CHANNEL_VARS.domain]: DOMAIN,
        [CHANNEL_VARS.operation]: 'call_user',
        [CHANNEL_VARS.role]: 'originator',
        [CHANNEL_VARS.destKind]: 'user',
        [CHANNEL_VARS.destValue]: destinationUserId,
      },
      timeoutSec: 600,
      target: { kind: 'dialplan', extension: ROUTE_EXTENSION, context: DOMAIN },
    })
    if (!cmd.ok) throw new Error(JSON.stringify(cmd.error))
    void pbx.bgapi(cmd.value, 60000)
    await waitFor(`${user} created`, () => rig.sim.liveChannels().some((c) => c.uuid === uuid), 5000, 1)
    await journal.value.accepted({ requestId, domain: DOMAIN, operation: 'call_user', uuids: [uuid], callbackUrl: rx.url, answerDeadlineAt: Date.now() + 60_000 })
    return { requestId, uuid }
  }

  const ringing = await place('slow', '5')
  // Busy once it rings (killed with that cause): the originate gave it its hangup record.
  const busy = await place('ring', '5')
  const kill = commands.uuidKill(busy.uuid, 'USER_BUSY')
  if (!kill.ok) throw new Error('uuid_kill')
  await pbx.bgapi(kill.value, 2000)
  const noTrace = { requestId: randomUUID(), uuid: randomUUID() }
  await journal.value.accepted({ requestId: noTrace.requestId, domain: DOMAIN, operation: 'call_user', uuids: [noTrace.uuid], callbackUrl: rx.url, answerDeadlineAt: Date.now() })
  const journaled = { requestId: randomUUID(), deliveryId: randomUUID() }
  const journaledBody = JSON.stringify({ result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } })
  await journal.value.accepted({ requestId: journaled.requestId, domain: DOMAIN, operation: 'call_user', uuids: [randomUUID()], callbackUrl: rx.url, answerDeadlineAt: Date.now() })
  await journal.value.result({ deliveryId: journaled.deliveryId, requestId: journaled.requestId, domain: DOMAIN, url: rx.url, body: journaledBody, createdAt: Date.now() })
  await waitFor('the busy leg gone', () => !rig.sim.liveChannels().some((c) => c.uuid === busy.uuid))
  // The earlier run dies: its link goes, its journal is closed as a crash would leave it (records durable).
  await journal.value.close()
  await pbx.close()
  t.ok(rig.sim.liveChannels().some((c) => c.uuid === ringing.uuid), '(a) still ringing when the daemon starts')

  const { daemon, logs } = await rig.daemon()
  await waitFor('recovery done', () => logs.has('recovery done'), 10000)
  t.match(logs.lines.find((l) => l.msg === 'recovery done'), { fromRecords: 1, adopted: 1, unknown: 1 })
  await waitFor('four results', () => rx.accepted().size === 4, 20000)

  const byRequest = new Map(rx.deliveries.map((d) => [String(d.headers['x-request-id']), d]))
  const body = (id: string) => JSON.parse(byRequest.get(id)?.body ?? '{}') as Record<string, unknown>
  t.same(body(ringing.requestId), { result_code: 0, uuid: ringing.uuid }, '(a) adopted, answered')
  t.same(body(busy.requestId), { result_code: 500, error: { id: 'busy', cause: 'USER_BUSY' } }, '(b) its recorded cause')
  t.same(body(noTrace.requestId), { result_code: 500, error: { id: 'outcome_unknown', cause: 'UNKNOWN' } }, '(c) outcome_unknown')
  t.equal(byRequest.get(journaled.requestId)?.body, journaledBody, '(d) the journaled bytes')
  t.equal(byRequest.get(journaled.requestId)?.headers['x-delivery-id'], journaled.deliveryId, '(d) the journaled delivery id')
  await waitFor('the adopted call bridged', () => rig.sim.liveChannels().some((c) => c.variables[CHANNEL_VARS.role] === 'destination' && c.variables[CHANNEL_VARS.requestId] === ringing.requestId), 10000)

  // A stop and a start on the same folder: nothing is open any more, nothing is sent again.
  await daemon.stop()
  const again = await rig.daemon()
  await sleep(1000)
  t.ok(logs.has(RECOVERY_STARTS), 'the first start had work left')
  t.notOk(again.logs.has(RECOVERY_STARTS), 'nothing left to recover')
  t.equal(rx.deliveries.length, 4, 'exactly one result per request, across both restarts')
  t.equal(acceptedBodies(rx).length, 4)
})
