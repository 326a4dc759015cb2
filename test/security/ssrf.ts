/**
 * SSRF: every address form of test/net/forms.ts, aimed at the canary's port, through every
 * outbound path the daemon has, driven from outside as a client would:
 *
 * - `callback_url` of call_user / call_group / call_external: a literal refused host is
 *   `400 invalid_parameter` at request time; a host NAME that resolves to loopback (`vm`,
 *   `runsc` and `localhost` names of /etc/hosts) is accepted and refused at delivery (a dead
 *   letter, "address refused"); a 302 from an allowed receiver is never followed.
 * - `xml_url:` of call_external: the IVR document fetch is refused when the call runs
 *   (accepted or not at request time, nothing may connect).
 * - inside a document the test server (the one address ivr.fetch_allow opens) serves:
 *   `<GetJSON>` to each form, `<Redirect>` to each form, `<Play>` of each form (a prompt URL
 *   handed to FreeSWITCH), and a redirect hop of the test server itself to each form.
 *
 * What is checked here: each path was really tried (the daemon's log shows the refusal with
 * its reason, the documents ran to their end); the canary (hostile.test.ts) shows that nothing
 * connected, and no Play of a refused URL reached the simulator.
 */
import { lookup } from 'node:dns/promises'
import { hostname } from 'node:os'
import { checkAddress } from '../../src/net/address-guard.js'
import { LITERAL_FORMS } from '../net/forms.js'
import { apiPost, outcomeOf, pool, type World } from './world.js'

/** `localhost` names: loopback whatever a resolver says (RFC 6761), refused without resolving. */
const LOCALHOST_NAMES = ['localhost', 'LocalHost.', 'api.localhost', 'localhost.']

let named: Promise<string[]> | undefined
/**
 * Host names that resolve (through the system resolver, as the daemon resolves) to this host:
 * the machine's own name and the usual /etc/hosts aliases. Judged only at delivery or fetch
 * time, so they test the resolve-once-then-check path. Only those that resolve here are used.
 */
function resolvingNames(): Promise<string[]> {
  named ??= (async () => {
    const out: string[] = []
    for (const name of [...new Set([hostname(), 'vm', 'runsc', 'ip6-localhost', 'ip6-loopback'])]) {
      const found = await lookup(name, { all: true }).catch(() => [])
      if (found.length > 0 && found.every((a) => !checkAddress(a.address, []).allowed)) out.push(name)
    }
    return out
  })()
  return named
}

const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')

/** The refused URLs of one path: every literal form on the canary's port. */
const formUrls = (port: number, path: string): string[] => LITERAL_FORMS.map((f) => `http://${f.host}:${port}${path}`)

const warnings = (w: World, msg: string, kind?: string): Array<Record<string, unknown>> =>
  w.logs.filter((l) => l.msg === msg && (kind === undefined || l.kind === kind))

/** The simulator's ESL port, from the daemon's start line. */
const eslPort = (w: World): string => String(w.logs.find((l) => l.msg === 'built-in FreeSWITCH simulator listening')?.port ?? 8021)

/** callback_url naming refused addresses literally: 400 at request time, nothing originated. */
export async function callbackLiterals(w: World): Promise<string[]> {
  const problems: string[] = []
  const family = 'ssrf callback_url'
  const bases: Array<[string, Record<string, unknown>]> = [
    ['call_user', { user_name: 'carol', destination: '0311112222' }],
    ['call_group', { group_name: 'sales', destination: '0311112222' }],
    ['call_external', { target: '0311112222', destination: 'carol' }],
  ]
  const cases: Array<{ op: string; body: Record<string, unknown>; url: string; literal: boolean }> = []
  for (const [op, base] of bases) {
    for (const name of LOCALHOST_NAMES) cases.push({ op, body: { ...base, callback_url: `http://${name}:${w.canary.port}/cb` }, url: name, literal: true })
    for (const url of formUrls(w.canary.port, '/cb')) cases.push({ op, body: { ...base, callback_url: url }, url, literal: true })
    // The daemon's own listeners and the ESL port: a callback must not talk to them either.
    for (const port of [new URL(w.api).port, eslPort(w)]) cases.push({ op, body: { ...base, callback_url: `http://127.0.0.1:${port}/api/call_user` }, url: `self:${port}`, literal: true })
  }
  const answers = await pool(cases, 8, async (c) => ({ c, a: await w.send(apiPost(c.op, c.body)) }))
  for (const { c, a } of answers) {
    w.tally.count(family, outcomeOf(a))
    // A URL the API's own rules refuse (not a valid URL at all) is as good a refusal as the guard's.
    if (a.status !== 400 || a.errorId !== 'invalid_parameter') problems.push(`${c.op} callback_url ${c.url}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  return problems
}

/** callback_url naming a host that resolves to this host: accepted, then refused at delivery (a dead letter). */
export async function callbackNames(w: World): Promise<string[]> {
  const problems: string[] = []
  const family = 'ssrf callback_url'

  // Names resolving to loopback: accepted (a name is judged at delivery), then refused for good.
  const before = warnings(w, 'callback not delivered; giving up (the result is in this log line)').length
  const names = await resolvingNames()
  w.tally.note(family, `names resolving to this host: ${names.join(' ') || 'none'}`)
  let accepted = 0
  for (const url of names.map((name) => `http://${name}:${w.canary.port}/cb`)) {
    const a = await w.send(apiPost('call_user', { user_name: 'carol', destination: '0311112222', callback_url: url }))
    w.tally.count(family, `${outcomeOf(a)} (name, judged at delivery)`)
    if (a.status === 200) accepted++
    else problems.push(`callback_url ${url}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  // A receiver the allow-list opens answers 302 to the canary: never followed (3xx is final).
  const hop = await w.send(apiPost('call_user', { user_name: 'carol', destination: '0311112222', callback_url: `${w.receiver.base}/hop` }))
  w.tally.count(family, `${outcomeOf(hop)} (allowed receiver answering 302 to the canary)`)
  if (hop.status !== 200) problems.push(`callback to the allowed receiver refused: ${hop.status} ${hop.text}`)
  try {
    await w.waitFor('the dead letters of the named callbacks', () => warnings(w, 'callback not delivered; giving up (the result is in this log line)').length - before >= accepted + 1, 20000)
  } catch (e) {
    problems.push(String(e))
  }
  const refusedAtDelivery = w.logs.filter((l) => JSON.stringify(l).includes('address refused')).length
  w.tally.note('ssrf callback delivery', `${refusedAtDelivery} dead letters "address refused" in the log`)
  if (refusedAtDelivery < accepted) problems.push(`${accepted} named callbacks accepted, only ${refusedAtDelivery} refused at delivery`)
  if (!w.receiver.got.some((g) => g.path === '/hop')) problems.push('the allowed receiver never got its callback (the positive control)')
  return problems
}

/** An IVR document served by the test server, run by one call_external. */
async function runDocument(w: World, path: string, xml: string): Promise<{ problems: string[]; report: boolean }> {
  w.docs.route(path, xml)
  w.docs.route(`${path}/report`, '{"ok":true}', 'application/json')
  const a = await w.send(apiPost('call_external', { target: '0311112222', destination: `xml_url:${w.docs.base}${path}` }))
  if (a.status !== 200) return { problems: [`document ${path}: call refused ${a.status} ${a.text.slice(0, 200)}`], report: false }
  try {
    await w.waitFor(`document ${path} to reach its end`, () => w.docs.requests.some((r) => r.path === `${path}/report`), 20000)
    return { problems: [], report: true }
  } catch (e) {
    return { problems: [String(e)], report: false }
  }
}

/** GetJSON, Redirect, Play and a redirect hop to every form, each kind in one document. */
export async function documentForms(w: World): Promise<string[]> {
  const problems: string[] = []
  const port = w.canary.port
  const urls = formUrls(port, '/x')
  const report = (path: string) => `<GetJSON var="done" url="${w.docs.base}${path}/report"/><Hangup/>`

  // GetJSON: a failed fetch is null and the document goes on. A Wait (an application FreeSWITCH
  // runs) after each fetch: the IVR's idle guard allows 20 fetches between two (idle-guard.ts).
  const tick = '<Wait length="0.01"/>'
  const blocked0 = w.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('ivr fetch failed') && l.kind === 'blocked_address').length
  const getJson = urls.map((u, i) => `<GetJSON var="j${i}" url="${xmlEscape(u)}" method="${i % 2 === 0 ? 'POST' : 'GET'}"/>${tick}`).join('')
  // The test server's own redirect hop to each form (the daemon checks every hop again).
  const hops = urls.map((u, i) => `<GetJSON var="h${i}" url="${xmlEscape(`${w.docs.base}/hop?to=${encodeURIComponent(u)}`)}"/>${tick}`).join('')
  // Redirect and Play: a refusal is a runtime error; each one's handler goes on with the next
  // form. A session runs its error handler at most MAX_ERROR_JUMPS (10) times: 9 forms a document.
  const chain = (forms: readonly string[], element: (u: string) => string, end: string) =>
    `<SetErrorHandler>s0</SetErrorHandler>${element(forms[0] ?? '')}<Hangup/>` +
    forms
      .map((_, i) => {
        const next = forms[i + 1]
        return `<Section name="s${i}">${tick}${next !== undefined ? `<SetErrorHandler>s${i + 1}</SetErrorHandler>${element(next)}<Hangup/>` : end}</Section>`
      })
      .join('')
  const docs: Array<[string, string, string]> = [
    ['GetJSON', '/getjson', `<IVR><Answer/>${getJson}${report('/getjson')}</IVR>`],
    ['redirect hop', '/hops', `<IVR><Answer/>${hops}${report('/hops')}</IVR>`],
  ]
  for (let k = 0; k * 9 < urls.length; k++) {
    const forms = urls.slice(k * 9, k * 9 + 9)
    docs.push([`Redirect ${k}`, `/redirect-${k}`, `<IVR><Answer/>${chain(forms, (u) => `<Redirect>${xmlEscape(u)}</Redirect>`, report(`/redirect-${k}`))}</IVR>`])
    docs.push([`Play ${k}`, `/play-${k}`, `<IVR><Answer/>${chain(forms, (u) => `<Play>${xmlEscape(u)}</Play>`, report(`/play-${k}`))}</IVR>`])
  }
  const ran = await Promise.all(docs.map(async ([name, path, xml]) => ({ name, ...(await runDocument(w, path, xml)) })))
  for (const r of ran) problems.push(...r.problems)
  w.tally.note('ssrf inside IVR documents', `${ran.filter((r) => r.report).length} of ${ran.length} documents ran to their end`)
  const blocked = w.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('ivr fetch failed') && l.kind === 'blocked_address').length - blocked0
  const handled = warnings(w, 'ivr runtime error: error handler').length
  w.tally.note('ssrf inside IVR documents', `${blocked} fetches refused (blocked_address) in the log`)
  w.tally.note('ssrf inside IVR documents', `${handled} runtime errors handled (refused Redirect and Play)`)
  // GetJSON (all forms) + hops (all forms) at least; Redirect refusals are fetch failures too.
  if (blocked < urls.length * 2) problems.push(`only ${blocked} blocked fetches logged for ${urls.length * 2} GetJSON and hop forms`)
  if (handled < urls.length * 2) problems.push(`only ${handled} runtime errors handled for ${urls.length * 2} Redirect and Play forms`)
  const plays = w.sim.executedApps().filter((e) => e.arg.includes(String(port)))
  if (plays.length > 0) problems.push(`applications given a refused URL: ${plays.map((p) => `${p.app} ${p.arg}`).join('; ').slice(0, 300)}`)
  return problems
}

/** xml_url: destinations naming each form: the document fetch is refused when the call runs. */
export async function xmlUrlForms(w: World): Promise<string[]> {
  const problems: string[] = []
  const family = 'ssrf xml_url document'
  const failed0 = w.logs.filter((l) => l.msg === 'ivr document not run').length
  const names = [...LOCALHOST_NAMES, ...(await resolvingNames())]
  const urls = [...formUrls(w.canary.port, '/doc'), ...names.map((n) => `http://${n}:${w.canary.port}/doc`)]
  // A fallback list: the refused first URL is skipped, the allowed second one runs.
  w.docs.route('/fallback', `<IVR><Answer/><GetJSON var="r" url="${w.docs.base}/fallback/report"/><Hangup/></IVR>`)
  w.docs.route('/fallback/report', '{}', 'application/json')
  const fallback = `http://127.0.0.1:${w.canary.port}/doc,${w.docs.base}/fallback`
  let accepted = 0
  const answers = await pool([...urls, fallback], 6, async (u) => ({ u, a: await w.send(apiPost('call_external', { target: '0311112222', destination: `xml_url:${u}` })) }))
  for (const { u, a } of answers) {
    w.tally.count(family, outcomeOf(a))
    if (a.status === 200) accepted++
    else if (a.status !== 400) problems.push(`xml_url:${u}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  try {
    await w.waitFor('every accepted xml_url call to be refused its document', () => w.logs.filter((l) => l.msg === 'ivr document not run').length - failed0 >= accepted - 1, 30000)
    await w.waitFor('the fallback document', () => w.docs.requests.some((r) => r.path === '/fallback/report'), 20000)
  } catch (e) {
    problems.push(String(e))
  }
  w.tally.note(family, `${w.logs.filter((l) => l.msg === 'ivr document not run').length - failed0} documents not run (refused)`)
  return problems
}

/** Inline documents carrying a refused URL (checked again at run time) are not refused at request time: see media.ts for paths. */
export const inlineDocument = (xml: string): string => `xml_url:inline_xml://${b64(xml)}`
