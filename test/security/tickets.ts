/**
 * Tickets and domains (src/cti/policy.ts, docs/cti.md "Ticket policy", "Who sees what"), on live
 * calls of the simulator: alice↔bob and a PSTN caller↔alice in alpha.test, oscar↔pat in
 * beta.test.
 *
 * - alice's browser (a ticket connection) tries bob's leg (visible: bridged to her) and PSTN
 *   transfers of her caller: `permission_denied`; beta's legs and beta's names: not found;
 *   hostile values in every command field: refused. None of it reaches the switch.
 * - a read-only monitor ticket commands nothing; a used ticket is refused (from another address).
 * - cross-domain: alpha's token connections never see a beta channel and back, and a token of
 *   one domain asking for a user of the other gets exactly the answer of a user that does not exist.
 */
import { INJECTIONS, UNICODE } from '../abuse/corpus.js'
import { openCti, ticket, type CtiClient } from './ws-client.js'
import { ALPHA, AUTH_ALPHA, AUTH_BETA, apiPost, outcomeOf, type World } from './world.js'

const WS = '/api/ws_cti'

interface Leg {
  readonly uuid: string
  readonly user_id: string | null
  readonly state: string
  readonly other_uuid: string | null
  readonly peer_location: string
}

/** The channels a connection knows now (its initial_info then its events, last state wins). */
function channelsOf(c: CtiClient): Map<string, Leg> {
  const out = new Map<string, Leg>()
  for (const m of c.messages) {
    if (m.type === 'initial_info') for (const ch of m.channels as Leg[]) out.set(ch.uuid, ch)
    if (m.type === 'info_event') {
      const ch = m.channel as Leg
      if (m.event === 'removed') out.delete(ch.uuid)
      else out.set(ch.uuid, ch)
    }
  }
  return out
}

export interface LiveCalls {
  readonly alphaWall: CtiClient
  readonly betaWall: CtiClient
  /** alice's and bob's bridged legs, the PSTN caller bridged to alice, beta's two legs. */
  readonly alice: string
  readonly bob: string
  readonly caller: string
  readonly beta: readonly string[]
}

/** Places the calls and waits until every leg is bridged, as the domains' full_events connections see them. */
export async function placeCalls(w: World): Promise<LiveCalls> {
  const alphaWall = await openCti(w, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_ALPHA })
  const betaWall = await openCti(w, `${WS}?app_name=wall&full_events=true`, { authorization: AUTH_BETA })
  const placed = [
    await w.send(apiPost('call_user', { user_name: 'alice', destination: 'bob' })),
    await w.send(apiPost('call_external', { target: '0311112222', destination: 'alice' })),
    await w.send(apiPost('call_user', { user_name: 'oscar', destination: 'pat' }, AUTH_BETA)),
  ]
  const bad = placed.filter((a) => a.status !== 200)
  if (bad.length > 0) throw new Error(`calls not placed: ${bad.map((a) => a.text).join('; ')}`)
  const bridged = (c: CtiClient, n: number) => [...channelsOf(c).values()].filter((l) => l.state === 'bridged').length >= n
  await w.waitFor('alpha: four legs bridged', () => bridged(alphaWall, 4), 20000)
  await w.waitFor('beta: two legs bridged', () => bridged(betaWall, 2), 20000)
  const alpha = [...channelsOf(alphaWall).values()]
  const aliceLegs = alpha.filter((l) => l.user_id === 'a1' && l.state === 'bridged')
  const bob = alpha.find((l) => l.user_id === 'b2' && l.state === 'bridged')
  const caller = alpha.find((l) => l.user_id === null && l.peer_location === 'external' && l.state === 'bridged')
  const alice = aliceLegs.find((l) => l.other_uuid === bob?.uuid)
  if (bob === undefined || caller === undefined || alice === undefined) throw new Error(`legs not found: ${JSON.stringify(alpha)}`)
  // Settled: the answers' own commands (leg records) are written before the refused window opens.
  await new Promise((r) => setTimeout(r, 300))
  return { alphaWall, betaWall, alice: alice.uuid, bob: bob.uuid, caller: caller.uuid, beta: [...channelsOf(betaWall).keys()] }
}

/** Everything alice's browser may not do, and hostile command fields. */
export async function ticketRefusals(w: World, calls: LiveCalls): Promise<string[]> {
  const problems: string[] = []
  const uri = `${WS}?app_name=crm&user_name=alice`
  const browser = await openCti(w, `${uri}&ticket=${await ticket(w, uri)}`)
  const expect = async (family: string, frame: Record<string, unknown>, id: string | RegExp) => {
    const m = await browser.command(frame)
    const error = (m.error as { id?: string } | undefined)?.id
    w.tally.count(family, `${m.result_code === 0 ? 'accepted' : String(error)}`)
    if (typeof id === 'string' ? error !== id : !id.test(String(error))) problems.push(`${JSON.stringify(frame).slice(0, 120)}: ${JSON.stringify(m).slice(0, 200)}`)
  }
  if (!browser.seen.has(calls.bob)) problems.push("alice's browser does not see bob's leg bridged to her (the case needs it visible)")
  // bob's leg, bridged to alice: visible, not hers.
  for (const frame of [{ cmd: 'hangup' }, { cmd: 'park' }, { cmd: 'park', timeout: 5 }, { cmd: 'transfer', destination: 'carol' }, { cmd: 'transfer', destination: 'sales' }]) {
    await expect('tickets: another user’s leg', { ...frame, uuid: calls.bob }, 'permission_denied')
  }
  // Her caller to PSTN numbers: the domain lacks CTI_PSTN_TRANSFER_ALLOWED.
  for (const destination of ['0311112222', '+81311112222', '0120123456', '110', '+4930123456', '0501230000', '0607777009']) {
    await expect('tickets: PSTN transfer', { cmd: 'transfer', uuid: calls.caller, destination }, 'permission_denied')
  }
  await expect('tickets: IVR transfer', { cmd: 'transfer', uuid: calls.caller, destination: 'xml_url:https://ivr.example.test/x' }, /^(destination_not_allowed|invalid_parameter|permission_denied)$/)
  // beta's names resolve to nothing in alpha; beta's legs are unknown to alpha.
  for (const destination of ['oscar', 'pat', 'ops', '7009', '7090', '7300']) {
    await expect('cross-domain: CTI transfer to the other domain', { cmd: 'transfer', uuid: calls.caller, destination }, /^(destination_not_found|permission_denied)$/)
  }
  for (const uuid of calls.beta) {
    for (const frame of [{ cmd: 'hangup' }, { cmd: 'park' }, { cmd: 'transfer', destination: 'bob' }]) {
      await expect('cross-domain: CTI command on the other domain’s leg', { ...frame, uuid }, 'channel_not_found')
    }
  }
  // The injection corpus in every field of every command.
  const values = [...INJECTIONS, ...UNICODE]
  for (const v of values) {
    await expect('injection: CTI command fields', { cmd: 'transfer', uuid: calls.caller, destination: `bob${v}` }, /^(invalid_parameter|destination_not_found|permission_denied)$/)
    await expect('injection: CTI command fields', { cmd: 'hangup', uuid: `${calls.alice}${v}` }, /^(invalid_parameter|channel_not_found)$/)
    await expect('injection: CTI command fields', { cmd: 'hangup', uuid: calls.alice, cause: `NORMAL_CLEARING${v}` }, 'invalid_parameter')
    await expect('injection: CTI command fields', { cmd: `park${v}`, uuid: calls.alice }, 'invalid_parameter')
    await expect('injection: CTI command fields', { cmd: 'park', uuid: calls.alice, timeout: `5${v}` }, 'invalid_parameter')
  }
  // A read-only monitor ticket commands nothing, even on its own domain's legs.
  const monitorUri = `${WS}?app_name=live&full_events=true&read_only=true`
  const monitor = await openCti(w, `${monitorUri}&ticket=${await ticket(w, monitorUri)}`)
  for (const uuid of [calls.alice, calls.bob, calls.caller]) {
    const m = await monitor.command({ cmd: 'hangup', uuid })
    const id = (m.error as { id?: string } | undefined)?.id
    w.tally.count('tickets: read-only monitor', String(id))
    if (id !== 'permission_denied') problems.push(`monitor hangup: ${JSON.stringify(m)}`)
  }
  await monitor.close()
  await browser.close()
  return problems
}

/** A ticket used twice, and tickets asked for what a browser may not have: from another address. */
export async function ticketMisuse(w: World, from: string): Promise<string[]> {
  const problems: string[] = []
  const uri = `${WS}?app_name=crm&user_name=alice`
  const once = await ticket(w, uri)
  const c = await openCti(w, `${uri}&ticket=${once}`)
  await c.close()
  const upgrade = (path: string) => ({
    method: 'GET',
    path,
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64') },
  })
  const cases: Array<[string, string]> = [
    ['the same ticket again', `${uri}&ticket=${once}`],
    ['the ticket for another user', `${WS}?app_name=crm&user_name=bob&ticket=${await ticket(w, uri)}`],
    ['the ticket without read_only', `${WS}?app_name=live&full_events=true&ticket=${await ticket(w, `${WS}?app_name=live&full_events=true&read_only=true`)}`],
    ['a made-up ticket', `${uri}&ticket=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`],
  ]
  for (const [name, path] of cases) {
    const a = await w.send(upgrade(path), { from })
    w.tally.count('tickets: misuse', outcomeOf(a))
    if (a.status !== 401) problems.push(`${name}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  // Asking for a ticket a browser may not hold: full_events without read_only, another domain's user.
  for (const [name, body, want] of [
    ['full_events ticket', { uri: `${WS}?app_name=x&full_events=true` }, 400],
    ['another domain’s user', { uri: `${WS}?app_name=x&user_name=oscar` }, 404],
  ] as const) {
    const a = await w.send(apiPost('gen_ws_ticket', body))
    w.tally.count('tickets: misuse', outcomeOf(a))
    if (a.status !== want) problems.push(`${name}: ${a.status} ${a.text.slice(0, 160)}`)
  }
  return problems
}

/**
 * Cross-domain over the API and the ws_cti upgrade: alpha's token naming beta's records gets
 * exactly the answer of a record that does not exist (the value aside), and back.
 */
export async function crossDomain(w: World): Promise<string[]> {
  const problems: string[] = []
  const pairs: Array<[string, Record<string, unknown>, string, string]> = [
    ['call_user', { destination: '0311112222' }, 'user_name', 'oscar'],
    ['call_user', { destination: '0311112222' }, 'user_id', 'o9'],
    ['call_user', { destination: '0311112222' }, 'user_extension', '7009'],
    ['call_user', { destination: '0311112222' }, 'user_did', '0607777009'],
    ['call_user', { destination: '0311112222' }, 'user_email', 'oscar@beta.test'],
    ['call_user', { destination: '0311112222' }, 'user_label', 'Oscar'],
    ['call_group', { destination: '0311112222' }, 'group_name', 'ops'],
    ['call_group', { destination: '0311112222' }, 'group_id', 'g90'],
    ['call_group', { destination: '0311112222' }, 'group_extension', '7090'],
    ['call_user', { user_name: 'alice' }, 'destination', 'oscar'],
    ['call_user', { user_name: 'alice' }, 'destination', 'ops'],
    ['call_external', { target: '0311112222' }, 'destination', 'oscar'],
    ['call_external', { target: '0311112222' }, 'destination', '7300'],
    ['initiate_call', { destination: '0311112222' }, 'user_name', 'oscar'],
    ['initiate_call', { user_name: 'alice', destination: '0311112222' }, 'group_name', 'ops'],
  ]
  const unknown = (v: string) => (/^[0-9]+$/.test(v) ? `${v.slice(0, -1)}${(Number(v.at(-1)) + 1) % 10}` : v.includes('@') ? `zz${v}` : `zz${v}`)
  for (const [op, base, field, value] of pairs) {
    const other = await w.send(apiPost(op, { ...base, [field]: value }))
    const none = await w.send(apiPost(op, { ...base, [field]: unknown(value) }))
    w.tally.count('cross-domain: API', outcomeOf(other))
    const same = other.status === none.status && other.text.split(value).join('#') === none.text.split(unknown(value)).join('#')
    if (other.status < 400 || !same) problems.push(`${op} ${field}=${value}: ${other.status} ${other.text.slice(0, 140)} vs unknown: ${none.status} ${none.text.slice(0, 140)}`)
  }
  // And back: beta's token naming alpha's.
  const back = await w.send(apiPost('call_user', { user_name: 'alice', destination: '0311112222' }, AUTH_BETA))
  w.tally.count('cross-domain: API', outcomeOf(back))
  if (back.errorId !== 'user_not_found') problems.push(`beta naming alice: ${back.status} ${back.text}`)
  // The ws_cti upgrade with a user of the other domain.
  for (const [auth, user] of [
    [AUTH_ALPHA, 'user_name=oscar'],
    [AUTH_ALPHA, 'user_id=o9'],
    [AUTH_BETA, 'user_name=alice'],
    [AUTH_BETA, 'user_extension=1001'],
  ] as const) {
    const a = await w.send({ method: 'GET', path: `${WS}?app_name=x&${user}`, headers: { authorization: auth, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'MDEyMzQ1Njc4OWFiY2RlZg==' } })
    w.tally.count('cross-domain: ws_cti', outcomeOf(a))
    if (a.errorId !== 'user_not_found') problems.push(`ws_cti ${user} with the other domain's token: ${a.status} ${a.text.slice(0, 140)}`)
  }
  return problems
}

/** Whether either domain's full_events connection was ever shown a channel of the other. */
export function crossDomainSightings(calls: LiveCalls, alphaUuids: readonly string[]): string[] {
  const out: string[] = []
  for (const u of calls.beta) if (calls.alphaWall.seen.has(u)) out.push(`${ALPHA} saw beta's ${u}`)
  for (const u of alphaUuids) if (calls.betaWall.seen.has(u)) out.push(`beta saw ${ALPHA}'s ${u}`)
  return out
}
