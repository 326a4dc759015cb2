/**
 * The hostile suite (issue 12, item 8): well over 1,000 hostile requests per run against one
 * running daemon (in-process, with its simulator), family by family, then the invariants:
 *
 * - 0 crashes: no 5xx answer, the daemon answers /healthz 200 and is still linked to its switch;
 * - 0 outbound connections to refused addresses: the canary (world.ts) saw none;
 * - 0 commands reaching the ESL from refused requests: each family of refusals is fired in a
 *   window in which the simulator must receive none of the commands a request makes
 *   (originate, uuid_kill/park/transfer/setvar, sendmsg), and no command at all carries hostile text;
 * - 0 cross-domain answers: alpha's credentials never see beta's records or channels, and back;
 * - 0 secrets in any answer of the API listener (SIP passwords, the other tokens, the xml_curl
 *   password, the callback secret).
 *
 * The totals (requests sent, refused by reason, canary hits) are printed as TAP comments.
 * Families live in ssrf.ts, media.ts, injection.ts, tickets.ts, throttle.ts, bodies.ts,
 * routes.ts, websocket.ts and xmlcurl.ts.
 */
import t, { type Test } from 'tap'
import { MARKERS } from '../abuse/corpus.js'
import { withoutOwnRecords } from '../pbx/fs-model.js'
import { oversize, slowloris } from './bodies.js'
import { apiCorpus, ctiStrings, strictText } from './injection.js'
import { fetchedMedia, inlineMedia, playbacksConfined } from './media.js'
import { otherRoutes } from './routes.js'
import { callbackLiterals, callbackNames, documentForms, xmlUrlForms } from './ssrf.js'
import { throttling } from './throttle.js'
import { crossDomain, crossDomainSightings, placeCalls, ticketMisuse, ticketRefusals } from './tickets.js'
import { badUpgrades, malformedFrames } from './websocket.js'
import { SECRETS, startWorld, type World } from './world.js'
import { XML_CURL_AUTH, xmlCurlBase, xmlCurlListener } from './xmlcurl.js'

t.setTimeout(150_000)

/** Client addresses of their own (127/8 is all loopback), so no block spills onto the suite's own 127.0.0.1. */
const ATTACKERS = {
  guesser: '127.0.0.9',
  corpus: '127.0.0.10',
  tickets: '127.0.0.11',
  xmlCurl: '127.0.0.12',
  bystander: '127.0.0.13',
  spread: ['127.0.0.20', '127.0.0.21', '127.0.0.22'],
}

/** What a request of a client can make the daemon send; none may follow a refused one. */
const CALL_COMMAND = /^(bgapi |api )?(originate|uuid_kill|uuid_park|uuid_transfer|uuid_setvar|uuid_broadcast|uuid_bridge|sendmsg)\b/

/** Runs one family of refusals and checks that no request of it reached the switch. */
async function refusedWindow(t: Test, w: World, name: string, run: () => Promise<string[]>): Promise<void> {
  const since = Date.now()
  const problems = await run()
  // Commands already written by then have arrived: the simulator logs each line as it reads it.
  await new Promise((r) => setTimeout(r, 200))
  const commands = w.eslSince(since)
  t.comment(`${name}: ${Date.now() - since} ms`)
  t.same(problems.slice(0, 20), [], `${name}: every answer as expected (${problems.length} problems)`)
  t.same(commands.filter((c) => CALL_COMMAND.test(c)).slice(0, 10), [], `${name}: no command reached the switch`)
}

t.test('hostile requests against one daemon', async (t) => {
  const w = await startWorld()
  t.teardown(() => w.close())
  const t0 = Date.now()

  // ---- families whose requests are all refused: nothing may reach the switch
  await refusedWindow(t, w, 'SSRF callback_url naming refused addresses', () => callbackLiterals(w))
  await refusedWindow(t, w, 'media paths in inline documents', () => inlineMedia(w))
  await refusedWindow(t, w, 'the abuse corpus (API)', () => apiCorpus(w, ATTACKERS.corpus))
  await refusedWindow(t, w, 'injection into CTI strings', () => ctiStrings(w))
  await refusedWindow(t, w, 'control characters and lone surrogates in free text', () => strictText(w))
  await refusedWindow(t, w, 'oversize requests', () => oversize(w))
  await refusedWindow(t, w, 'path tricks on the other routes', () => otherRoutes(w))
  await refusedWindow(t, w, 'broken WebSocket upgrades', () => badUpgrades(w))
  await refusedWindow(t, w, 'malformed WebSocket frames', () => malformedFrames(w))
  await refusedWindow(t, w, 'throttling', () => throttling(w, ATTACKERS.guesser, ATTACKERS.bystander, ATTACKERS.spread))

  // ---- requests that run calls (outbound paths are judged when the call runs), beside slow requests
  const slow = slowloris(w)
  t.same((await callbackNames(w)).slice(0, 20), [], 'SSRF callback_url naming this host: refused at delivery')
  t.same((await xmlUrlForms(w)).slice(0, 20), [], 'SSRF xml_url: every document fetch refused')
  t.same((await documentForms(w)).slice(0, 20), [], 'SSRF inside documents: every GetJSON, Redirect, Play and hop refused')
  t.same((await fetchedMedia(w)).slice(0, 20), [], 'media paths in fetched documents: refused when the call runs')
  t.same((await slow).slice(0, 20), [], 'slow bodies and headers are cut by the request timeout')
  await w.waitFor('the calls to end', () => w.sim.liveChannels().length === 0, 30000)

  // ---- tickets and domains, on live calls
  const calls = await placeCalls(w)
  await refusedWindow(t, w, 'ticket policy', () => ticketRefusals(w, calls))
  await refusedWindow(t, w, 'ticket misuse', () => ticketMisuse(w, ATTACKERS.tickets))
  await refusedWindow(t, w, 'cross-domain requests', () => crossDomain(w))
  // The positive control of the ESL tap: the token connection's hangup of bob's leg does reach the switch.
  const since = Date.now()
  const done = await calls.alphaWall.command({ cmd: 'hangup', uuid: calls.bob })
  t.match(done, { result_code: 0 }, 'a permitted command is accepted')
  await w.waitFor('the permitted command on the wire', () => w.eslSince(since).some((c) => c.includes(`uuid_kill ${calls.bob}`)))
  const alphaUuids = [calls.alice, calls.bob, calls.caller, ...calls.alphaWall.seen]
  for (const c of w.sim.liveChannels()) w.sim.remoteHangup(c.uuid)
  await w.waitFor('the calls to end', () => w.sim.liveChannels().length === 0, 30000)
  t.same(crossDomainSightings(calls, alphaUuids), [], '0 cross-domain answers: no domain was shown a channel of the other')
  await calls.alphaWall.close()
  await calls.betaWall.close()

  // ---- the xml_curl listener
  await refusedWindow(t, w, 'the xml_curl listener', () => xmlCurlListener(w, ATTACKERS.xmlCurl, ATTACKERS.bystander))
  const base = xmlCurlBase(w)
  if (base !== undefined) t.same((await slowloris(w, base, '/freeswitch/xml_curl', XML_CURL_AUTH, 10)).slice(0, 10), [], 'slow requests on the xml_curl listener are cut too')

  // ---- the invariants over the whole run
  // The one '$' the daemon writes itself, taken out: each leg's hangup hook (pbx/commands.ts hangupRecordVar).
  const esl = w.eslSince(0).map(withoutOwnRecords)
  t.same(esl.filter((c) => MARKERS.some((m) => m !== '\n' && c.includes(m))).slice(0, 10), [], 'no ESL command carries hostile text')
  t.same(playbacksConfined(w), [], 'every file the switch was given to play is a prompt or a guarded URL')
  const serverErrors = w.answers.filter((a) => a.status >= 500 || a.status === 0)
  t.same(serverErrors.map((a) => `${a.status} ${a.text.slice(0, 120)}`).slice(0, 10), [], '0 crashes: no 5xx answer')
  const leaks = w.answers.filter((a) => SECRETS.some((s) => a.text.includes(s)))
  t.same(leaks.map((a) => a.text.slice(0, 200)).slice(0, 5), [], 'no answer of the API listener carries a secret')
  t.same(w.canary.hits, [], '0 outbound connections to refused addresses (canary)')
  t.equal((await fetch(`${w.api}/healthz`)).status, 200, '0 crashes: the daemon is up and linked after the run')
  t.ok(w.tally.total() >= 1000, `at least 1,000 hostile requests (${w.tally.total()})`)

  const refused = [...w.tally.byOutcome()].filter(([k]) => /^[4-5][0-9][0-9]|denied|not_found|closed|cut/.test(k)).sort((a, b) => b[1] - a[1])
  t.comment(`hostile requests: ${w.tally.total()} in ${Math.round((Date.now() - t0) / 1000)} s (API listener answers: ${w.answers.length}); ESL commands seen: ${esl.length}; canary hits: ${w.canary.hits.length}`)
  t.comment(`refused by reason: ${refused.map(([k, v]) => `${k} ${v}`).join(', ')}`)
  for (const line of w.tally.lines()) t.comment(line)
})
