/**
 * The recording actions of the cod_route extension (issue 28; src/xmlcurl/recording.ts): where
 * they go for each kind of destination, when there are none, and what a hostile recording id or
 * an unusable file does (refused before any file name is made; the call goes on unrecorded).
 */
import Koa from 'koa'
import t from 'tap'
import { answerFetch, FetchForm, xmlCurlRouter, type DialplanRecording } from '../../src/xmlcurl/index.js'
import type { BridgeGate } from '../../src/xmlcurl/bridge-gate.js'
import { silentLogger } from '../../src/util/logger.js'
import { err, ok } from '../../src/util/result.js'
import { serveUntilTeardown } from '../support/serve.js'
import { actionsOf, freeswitchBody, makeRuntime, originatedLeg, overTheWire, phoneCall, XML_CURL_PASSWORD, XML_CURL_USER } from './helpers.js'

const runtime = makeRuntime()
const ID = '6f1c2a4e-0b7d-4c1e-9a53-2f8e7d6c5b4a'
const ROOT = '/var/lib/cod/recordings'

/** A recording dependency that answers `<ROOT>/<domain>/<id>.wav` (or what `file` says) and remembers every call. */
function recorder(file: (domain: string, id: string) => ReturnType<DialplanRecording['recordingFile']> = (d, id) => ok(`${ROOT}/${d}/${id}.wav`)) {
  const asked: Array<[string, string]> = []
  const refusals: Array<[string, string, string]> = []
  const dep: DialplanRecording = {
    recordingFile: (d, id) => {
      asked.push([d, id])
      return file(d, id)
    },
    recordingRefused: (d, id, reason) => refusals.push([d, id, reason]),
  }
  return { dep, asked, refusals }
}

const ask = (form: URLSearchParams, recording?: DialplanRecording, gate?: BridgeGate) => answerFetch(new FetchForm(overTheWire(form)), runtime.directory, undefined, gate, recording)
const actions = (form: URLSearchParams, recording?: DialplanRecording): string[] => {
  const a = ask(form, recording)
  if (!a.found) throw new Error(`expected a document, got not found: ${a.reason}`)
  return actionsOf(a.xml)
}
/** The actions from the first recording action on, up to and including the next bridge or park. */
const recordingPart = (list: string[]): string[] => {
  const from = list.indexOf('set RECORD_STEREO=true')
  if (from < 0) return []
  const to = list.findIndex((a, i) => i > from && (a.startsWith('bridge ') || a === 'park'))
  return list.slice(from, to + 1)
}
const recorded = (vars: Record<string, string>) => originatedLeg({ ...vars, cod_recording_id: ID })
const FILE = `${ROOT}/example.test/${ID}.wav`

t.test('a user destination: stereo, from the bridge, just before the bridge', async (t) => {
  const r = recorder()
  const list = actions(recorded({ cod_dest_kind: 'user', cod_dest_value: '2' }), r.dep)
  t.same(recordingPart(list), ['set RECORD_STEREO=true', 'set RECORD_BRIDGE_REQ=true', `record_session ${FILE}`, 'bridge user/bob@example.test'])
  t.same(r.asked, [['example.test', ID]], 'the file is asked for once, with the context domain and the id')
  t.same(r.refusals, [])
  // Everything else is what an unrecorded call gets.
  const plain = actions(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }), r.dep)
  t.same(list.filter((a) => !recordingPart(list).slice(0, -1).includes(a)), plain)
})

t.test('a PSTN destination and a group hunt: armed once, before the first bridge', async (t) => {
  const r = recorder()
  const pstn = actions(recorded({ cod_dest_kind: 'pstn', cod_dest_value: '0311112222' }), r.dep)
  t.same(recordingPart(pstn), ['set RECORD_STEREO=true', 'set RECORD_BRIDGE_REQ=true', `record_session ${FILE}`, 'bridge sofia/gateway/pstn/0311112222'])
  const group = actions(recorded({ cod_dest_kind: 'group', cod_dest_value: '10' }), r.dep)
  t.equal(group.filter((a) => a.startsWith('record_session ')).length, 1, 'one recording for the whole hunt')
  const firstBridge = group.findIndex((a) => a.startsWith('bridge '))
  t.equal(group[firstBridge - 1], `record_session ${FILE}`, 'just before the first member rings')
  t.ok(group.slice(firstBridge + 1).some((a) => a.startsWith('bridge ')), 'the other members follow')
})

t.test('an IVR destination: from the answer (no bridge requirement), before the park', async (t) => {
  const r = recorder()
  const extension = actions(recorded({ cod_dest_kind: 'extension', cod_dest_value: '3001' }), r.dep)
  t.same(recordingPart(extension), ['set RECORD_STEREO=true', `record_session ${FILE}`, 'park'])
  const ivr = actions(recorded({ cod_dest_kind: 'ivr', cod_dest_value: 'req-0001' }), r.dep)
  t.same(recordingPart(ivr), ['set RECORD_STEREO=true', `record_session ${FILE}`, 'park'])
  t.notOk(ivr.includes('set RECORD_BRIDGE_REQ=true'))
})

t.test('not recorded: no recording id, no recording dependency, a phone\'s own call, an empty group, a refused bridge', async (t) => {
  const r = recorder()
  const none = (list: string[]) => list.every((a) => !a.startsWith('record_session') && !a.startsWith('set RECORD_'))
  t.ok(none(actions(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2' }), r.dep)), 'a leg without cod_recording_id')
  t.ok(none(actions(recorded({ cod_dest_kind: 'user', cod_dest_value: '2' }))), 'a daemon without recordings')
  // A phone's INVITE carries what its sender wants: its variables are never read as ours.
  t.ok(none(actions(phoneCall('1002', { variable_cod_recording_id: ID }), r.dep)), 'an inbound call naming a recording id')
  t.ok(none(actions(recorded({ cod_dest_kind: 'group', cod_dest_value: '11' }), r.dep)), 'a group with nobody to ring: nothing to record')
  const closed: BridgeGate = { mayBridge: () => false }
  const gated = ask(recorded({ cod_dest_kind: 'user', cod_dest_value: '2' }), r.dep, closed)
  t.ok(gated.found)
  if (gated.found) t.same(actionsOf(gated.xml), ['hangup NORMAL_CIRCUIT_CONGESTION'], 'over the channel limit: the hangup alone')
  t.same(r.asked, [], 'no file was asked for')
})

t.test('a hostile recording id is refused before it can become a file name', async (t) => {
  const hostile = [
    '../../../etc/passwd',
    `${ID}/../../x`,
    '..%2F..%2Fetc%2Fpasswd',
    `${ID}.wav`,
    ID.toUpperCase(),
    `${ID} `,
    '${system(id)}',
    `${ID}\nrecord_session /etc/cron.d/x`,
    '',
  ]
  for (const id of hostile) {
    const r = recorder()
    const a = ask(originatedLeg({ cod_dest_kind: 'user', cod_dest_value: '2', cod_recording_id: id }), r.dep)
    // As every variable of ours that is present: invalid means the document is refused.
    t.notOk(a.found, `refused: ${JSON.stringify(id)}`)
    t.same(r.asked, [], `no file asked for ${JSON.stringify(id)}`)
  }
})

t.test('no usable file: the call goes on unrecorded and the daemon hears why', async (t) => {
  const cases: Array<[string, (d: string, id: string) => ReturnType<DialplanRecording['recordingFile']>, RegExp]> = [
    ['the store refuses', () => err('cannot make /full/disk: ENOSPC'), /ENOSPC/],
    ['a space in recording.dir', (d, id) => ok(`/srv/my recordings/${d}/${id}.wav`), /application data may not hold/],
    ['an expansion', (d, id) => ok(`/srv/\${base_dir}/${d}/${id}.wav`), /application data may not hold/],
    ['a quote and markup', (d, id) => ok(`/srv/"/><action application="system"/${id}.wav`), /application data may not hold/],
  ]
  for (const [name, file, reason] of cases) {
    const r = recorder(file)
    const list = actions(recorded({ cod_dest_kind: 'user', cod_dest_value: '2' }), r.dep)
    t.ok(list.includes('bridge user/bob@example.test'), `${name}: still bridged`)
    t.notOk(list.some((a) => a.startsWith('record_session') || a.startsWith('set RECORD_')), `${name}: nothing recorded`)
    t.equal(r.refusals.length, 1, `${name}: told once`)
    t.same(r.refusals[0]?.slice(0, 2), ['example.test', ID])
    t.match(r.refusals[0]?.[2], reason)
  }
})

t.test('over HTTP: the xml_curl route hands its recording dependency to the dialplan', async (t) => {
  const r = recorder()
  const app = new Koa()
  app.use(xmlCurlRouter({ runtime: () => runtime, logger: silentLogger(), recording: r.dep }).routes())
  const base = await serveUntilTeardown(t, app)
  const res = await fetch(`${base}/freeswitch/xml_curl`, {
    method: 'POST',
    body: freeswitchBody(recorded({ cod_dest_kind: 'user', cod_dest_value: '2' })),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${XML_CURL_USER}:${XML_CURL_PASSWORD}`).toString('base64')}` },
  })
  t.equal(res.status, 200)
  t.match(await res.text(), `<action application="record_session" data="${FILE}"/>`)
  t.same(r.asked, [['example.test', ID]])
})
