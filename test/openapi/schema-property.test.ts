/**
 * The request schemas of the OpenAPI document take nothing the daemon refuses for its shape
 * (issue 26 item 4; live-replies.test.ts checks the other way on the end-to-end requests),
 * checked on the whole daemon on the simulator with bodies generated from the document it
 * serves (arbitrary.ts, fast-check, one fixed seed):
 *
 * - a body that matches its schema is never refused for its shape: the only refusals allowed
 *   are REFUSALS, what only the domain or the configuration can tell (the document lists the
 *   same in each operation's description);
 * - the same body broken in one rule (MUTATIONS) is refused by the document and by the daemon
 *   as invalid_parameter / missing_parameter;
 * - every reply matches the document.
 *
 * COD_SCHEMA_SEED=<n> reruns with another seed; every failure names the seed and the body.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { Agent, fetch } from 'undici'
import type { JsonObject } from '../../src/api/openapi/json.js'
import { DEMO_AUTH, startHarness } from '../e2e/harness.js'
import { arbitraryOf } from './arbitrary.js'
import { documentChecker } from './validate.js'

t.setTimeout(120_000)

const SEED = Number(process.env['COD_SCHEMA_SEED'] ?? 26_08)
const RUNS = 40

const OPERATIONS = ['call_user', 'call_group', 'call_external', 'initiate_call', 'gen_ws_ticket'] as const
type Op = (typeof OPERATIONS)[number]
const schemaName = (op: Op): string => `${op
  .split('_')
  .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
  .join('')}Request`

/**
 * The refusals a schema-valid body may get: each an error id and, where the id also covers
 * shape errors, the words that say it is the domain's rule (calling numbers, callbacks.allow...).
 */
const REFUSALS: ReadonlyArray<{ readonly id: string; readonly description?: RegExp; readonly why: string }> = [
  { id: 'user_not_found', why: 'no such user in the domain' },
  { id: 'group_not_found', why: 'no such group in the domain (or group_resolver finds none)' },
  { id: 'destination_not_found', why: 'the destination names nothing in the domain' },
  { id: 'ambiguous_user', why: 'identifiers name different users, or a shared label' },
  { id: 'ambiguous_group', why: 'identifiers name different groups, or group_resolver another group' },
  { id: 'user_not_registered', why: 'the user has no registered terminal' },
  { id: 'no_member_available', why: 'no member of the group is registered' },
  { id: 'channel_limit_reached', why: "the domain's channel_limit" },
  { id: 'privilege_required', why: 'xml_url: without the domain privilege' },
  { id: 'invalid_xml', why: 'an inline IVR document whose content is not a valid IVR document' },
  { id: 'destination_not_allowed', description: /PSTN numbers are not allowed here/, why: 'call_external: the directory says the number is PSTN' },
  { id: 'invalid_parameter', description: /is not one of the calling numbers this domain may present/, why: "calling_number / ani not among the domain's calling_numbers" },
  { id: 'invalid_parameter', description: /this number belongs to the domain/, why: 'end_user details on a number the domain claims' },
  { id: 'invalid_parameter', description: /^callback_url: must not name a /, why: 'a callback_url host outside callbacks.allow' },
  { id: 'invalid_parameter', description: /^recording_callback_url: must not name a /, why: 'a recording_callback_url host outside callbacks.allow' },
  { id: 'invalid_parameter', description: /^status_callback_url: must not name a /, why: 'a status_callback_url host outside callbacks.allow (issue 29)' },
  { id: 'recording_not_allowed', why: 'record against the recording mode that applies (issue 28)' },
  { id: 'invalid_parameter', description: /^strategy: group \S+ allows only /, why: "a call_group strategy the group's strategies do not list (issue 31)" },
]

/** Records of conf/domains/example.test.yaml, mixed into the generated values so that lookups succeed too. */
const HINTS = (callbackUrl: string): Record<string, readonly unknown[]> => ({
  user_id: ['1', '2'],
  user_name: ['alice', 'bob', 'carol', 'dave'],
  user_extension: ['1001', '1003'],
  group_id: ['10', '11'],
  group_name: ['sales', 'support'],
  destination: ['bob', '1002', 'sales', '2002', '0311112222'],
  target: ['0311112222', '{name=Jane%20Doe}0311112222'],
  pstn_number: ['0311112222'],
  calling_number: ['0501230000'],
  ani: ['0501230001'],
  callback_url: [callbackUrl],
  recording_callback_url: [callbackUrl],
  status_callback_url: [callbackUrl],
  uri: ['/api/ws_cti?app_name=crm&user_name=alice'],
})

type Body = Record<string, unknown>

const without = (b: Body, re: RegExp): Body => Object.fromEntries(Object.entries(b).filter(([k]) => !re.test(k)))

/** The body with its identifiers replaced by one known record (alice, sales); undefined where there are none. */
function pin(op: Op, b: Body): Body | undefined {
  switch (op) {
    case 'call_user':
      return { ...without(b, /^(user|group)_/), user_name: 'alice' }
    case 'call_group':
      return { ...without(b, /^group_/), group_name: 'sales' }
    case 'initiate_call':
      return { ...without(b, /^(user_name|group_name)$/), ...(b['pstn_number'] === undefined ? { user_name: 'alice' } : {}), ...(b['group_name'] === undefined ? {} : { group_name: 'sales' }) }
    default:
      return undefined
  }
}

/**
 * One rule broken: the mutated body (undefined where the rule does not apply to the body) and
 * the ids the daemon may answer. `afterLookups`: a rule the daemon checks after the directory
 * lookups, tried only on a body it accepted (else a lookup's refusal would come first).
 */
interface Mutation {
  readonly rule: string
  readonly apply: (op: Op, body: Body) => unknown
  readonly ids: readonly string[]
  readonly afterLookups?: boolean
}
const MUTATIONS: readonly Mutation[] = [
  { rule: 'an unknown parameter', apply: (_op, b) => ({ ...b, colour: 'red' }), ids: ['invalid_parameter'] },
  {
    rule: 'no identifier of the one-of-required set',
    apply: (op, b) => {
      const keys = { call_user: /^user_/, call_group: /^group_/, initiate_call: /^(user_name|pstn_number)$/ }[op as string]
      return keys === undefined ? undefined : Object.fromEntries(Object.entries(b).filter(([k]) => !keys.test(k)))
    },
    ids: ['missing_parameter'],
  },
  {
    // Not gen_ws_ticket: its uri is read by the WHATWG URL parser, which drops leading and
    // trailing control characters and percent-encodes the others (its pattern refuses them).
    rule: 'a control character in a string',
    apply: (op, b) => {
      const key = op === 'gen_ws_ticket' ? undefined : Object.keys(b).find((k) => typeof b[k] === 'string')
      return key === undefined ? undefined : { ...b, [key]: `${String(b[key])}\u0007` }
    },
    ids: ['invalid_parameter'],
  },
  { rule: 'an empty destination', apply: (op, b) => (op === 'gen_ws_ticket' ? undefined : { ...b, destination: '' }), ids: ['invalid_parameter'] },
  {
    rule: 'an xml_url: destination outside call_external',
    apply: (op, b) => (op === 'call_user' || op === 'call_group' || op === 'initiate_call' ? { ...b, destination: 'xml_url:https://ivr.example/menu.xml' } : undefined),
    ids: ['destination_not_allowed'],
    afterLookups: true,
  },
  {
    rule: 'an empty end_user',
    apply: (op, b) =>
      op === 'call_external' ? { ...b, target: { called_number: '0311112222', end_user: {} } } : op === 'call_user' || op === 'call_group' ? { ...b, destination: { called_number: '0311112222', end_user: {} } } : undefined,
    ids: ['invalid_parameter'],
  },
  { rule: 'a callback_url that is not http(s)', apply: (op, b) => (['call_user', 'call_group', 'call_external'].includes(op) ? { ...b, callback_url: 'ftp://files.example/cb' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'a callback_url without a host', apply: (op, b) => (['call_user', 'call_group', 'call_external'].includes(op) ? { ...b, callback_url: 'https://' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'an answer_timeout over 3600', apply: (op, b) => (['call_user', 'call_group', 'call_external'].includes(op) ? { ...b, answer_timeout: '3601' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'a target that is not a PSTN number', apply: (op, b) => (op === 'call_external' ? { ...b, target: 'alice' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'a pstn_number with an empty prefix', apply: (op, b) => (op === 'initiate_call' ? { ...b, pstn_number: '{}0311112222' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'a ticket uri of another path', apply: (op) => (op === 'gen_ws_ticket' ? { uri: '/api/other?app_name=crm&user_name=alice' } : undefined), ids: ['invalid_parameter'] },
  { rule: 'a ticket uri with full_events alone', apply: (op) => (op === 'gen_ws_ticket' ? { uri: '/api/ws_cti?app_name=crm&full_events=true' } : undefined), ids: ['invalid_parameter'] },
]

t.test(`schema-valid bodies are refused only for the domain's rules; one rule broken is refused (seed ${SEED})`, async (t) => {
  // The shipped configuration with a channel_limit that accepted calls (they ring on for
  // minutes) do not reach before the last operation has had its turn.
  const dir = await mkdtemp(join(tmpdir(), 'cod-schema-property-'))
  await mkdir(join(dir, 'domains'))
  await writeFile(join(dir, 'daemon.yaml'), await readFile('conf/daemon.yaml', 'utf8'))
  const domain = (await readFile('conf/domains/example.test.yaml', 'utf8')).replace(/^channel_limit: \d+$/m, 'channel_limit: 5000')
  await writeFile(join(dir, 'domains', 'example.test.yaml'), domain)
  const h = await startHarness({ configFile: join(dir, 'daemon.yaml') })
  t.teardown(async () => {
    await h.close()
    await rm(dir, { recursive: true, force: true })
  })
  const base = h.daemon.baseUrl
  const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as JsonObject
  const check = documentChecker(doc)
  const hints = HINTS(h.callbackUrl)
  // wait_ms: the generated value, capped at 50 ms here. Any value is schema-valid; a request at
  // the domain's limit waits that long, and bodies are posted one after the other: up to 30 s each
  // would make this test's time depend on the simulator's channels, not on the rules it checks.
  const quick = (body: unknown): unknown => {
    const b = body as Body
    if (typeof b !== 'object' || b === null || !('wait_ms' in b)) return body
    // Only a valid value is capped: a mutated one (30001, "soon") must reach the daemon as it is.
    const ms = b['wait_ms']
    const valid = (typeof ms === 'number' && Number.isInteger(ms) && ms >= 0 && ms <= 30_000) || (typeof ms === 'string' && /^[0-9]{1,12}$/.test(ms) && Number(ms) <= 30_000)
    return valid ? { ...b, wait_ms: Math.min(Number(ms), 50) } : body
  }

  // A new connection per request (undici: pipelining 0 disables keep-alive). The client and the
  // daemon share this process's event loop; under load a pooled connection was reused just as the
  // daemon closed it, even with a 1 s client idle timeout against the daemon's 5 s (ECONNRESET,
  // "fetch failed", seen in a full run at load 12). This test is about the replies, not about
  // connection reuse (test/api/early-reply.test.ts is).
  const agent = new Agent({ pipelining: 0 })
  t.teardown(() => agent.close())
  const post = async (op: Op, body: unknown) => {
    const res = await fetch(`${base}/api/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: DEMO_AUTH },
      body: JSON.stringify(quick(body)),
      dispatcher: agent,
    })
    const headers: Record<string, string> = {}
    res.headers.forEach((v, k) => (headers[k] = v))
    const reply = (await res.json()) as { result_code: number; error?: { id: string; description: string } }
    const problems = check.checkReply(`/api/${op}`, 'post', res.status, headers, reply)
    if (problems.length > 0) t.fail(`seed ${SEED}: the ${op} reply ${res.status} ${JSON.stringify(reply)} does not match the document: ${problems.join('; ')}`)
    return { status: res.status, reply }
  }

  const seen = new Map<string, number>()
  const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1)
  let mutated = 0
  for (const [index, op] of OPERATIONS.entries()) {
    const pointer = ['components', 'schemas', schemaName(op)]
    const samples = fc.sample(arbitraryOf(doc, { $ref: `#/${pointer.join('/')}` }, { hints }), { seed: SEED + index, numRuns: RUNS })
    const valid = samples.filter((b) => check.checkAt(pointer, b).length === 0) as Body[]
    t.ok(valid.length >= RUNS * 0.9, `${op}: ${valid.length} of ${RUNS} generated bodies match the schema`)

    for (const [i, generated] of valid.entries()) {
      // The generated body, then (where it has identifiers) the same body naming a known record,
      // so that the rules checked after the directory lookups run on generated values too.
      const pinned = pin(op, generated)
      const bodies = pinned !== undefined && check.checkAt(pointer, pinned).length === 0 ? [generated, pinned] : [generated]
      let last = { body: generated, accepted: false }
      for (const body of bodies) {
        const { status, reply } = await post(op, body)
        const accepted = status === 200
        if (accepted) {
          count(`${op} 200`)
        } else {
          const allowed = REFUSALS.find((r) => r.id === reply.error?.id && (r.description === undefined || r.description.test(reply.error.description)))
          if (allowed === undefined) t.fail(`seed ${SEED}: a schema-valid ${op} body was refused: ${status} ${JSON.stringify(reply.error)} ${JSON.stringify(body)}`)
          else count(`${op} ${allowed.id}`)
        }
        last = { body, accepted }
      }

      const applicable = MUTATIONS.filter((m) => last.accepted || m.afterLookups !== true)
        .map((m) => ({ m, body: m.apply(op, last.body) }))
        .filter((x) => x.body !== undefined)
      const pick = applicable[i % applicable.length]
      if (pick === undefined) continue
      mutated++
      if (check.checkAt(pointer, pick.body).length === 0) t.fail(`seed ${SEED}: ${op} with ${pick.m.rule} matches the schema: ${JSON.stringify(pick.body)}`)
      const broken = await post(op, pick.body)
      if (broken.status !== 400 || !pick.m.ids.includes(broken.reply.error?.id ?? '')) {
        t.fail(`seed ${SEED}: ${op} with ${pick.m.rule} got ${broken.status} ${JSON.stringify(broken.reply)}, not ${pick.m.ids.join('/')}: ${JSON.stringify(pick.body)}`)
      }
    }
  }
  t.comment([...seen].map(([k, n]) => `${k}: ${n}`).join(', '))
  for (const op of OPERATIONS) t.ok(seen.get(`${op} 200`) ?? 0, `some generated ${op} bodies were accepted`)
  t.ok(mutated >= RUNS * OPERATIONS.length * 0.9, `${mutated} broken bodies refused by the document and the daemon`)
})
