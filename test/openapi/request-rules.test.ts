/**
 * What the request schemas of the OpenAPI document say (issue 26 items 1-3): every pattern is
 * portable (ECMA-262 with `u`, RE2, Rust), the rules JSON Schema can state are in the schemas
 * (one identifier required, non-empty end_user, http(s) callback_url with a host, PSTN and
 * destination forms, the ws_cti URI), and each operation lists the refusals only the domain
 * can decide, with ids its responses document. schema-property.test.ts checks on the live
 * daemon that whatever the schemas take, the daemon takes too.
 */
import t from 'tap'
import { buildOpenApiDocument } from '../../src/api/openapi/document.js'
import { DOMAIN_RULES } from '../../src/api/openapi/domain-rules.js'
import { ALL_ERROR_IDS } from '../../src/api/openapi/errors.js'
import { timeoutSchema } from '../../src/api/schema/scalars.js'
import { strictString } from '../../src/api/schema/text.js'
import { patternsOf, portabilityProblems } from './portable-pattern.js'
import { documentChecker } from './validate.js'

const doc = buildOpenApiDocument({ prefix: '/api' })
const check = documentChecker(doc)
const schema = (name: string) => ['components', 'schemas', name]

t.test('every pattern of the document is portable: no surrogate escape, lookaround or backreference; compiles with the u flag', async (t) => {
  const patterns = patternsOf(doc)
  t.ok(patterns.length > 50, `${patterns.length} patterns`)
  for (const { pointer, pattern } of patterns) {
    const problems = portabilityProblems(pattern)
    if (problems.length > 0) t.fail(`${pointer}: ${problems.join('; ')}`)
  }
  // What the document had before issue 26: both are refused by RE2 and Rust, and by this check.
  t.ok(
    portabilityProblems('^(?:[^\\x00-\\x1f\\x7f-\\x9f\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$').some((p) => /surrogate escape/.test(p)),
    'the former strict-text pattern is reported',
  )
  t.ok(
    portabilityProblems('^(?=[0-9]{1,8}$)0*(?:[1-9][0-9]{0,2}|3600)$').some((p) => /lookaround/.test(p)),
    'the former timeout pattern is reported',
  )
  for (const [bad, why] of [
    ['(a)\\1', /backreference/],
    ['\\d+', /escape \\d/],
    ['[a&&b]', /&& inside a class/],
    ['[a[b]', /unescaped \[/],
    ['a{1,2000}', /over 1000/],
    ['a\\/b', /escape \\\//],
    ['(?<n>a)', /not portable/],
  ] as const) {
    t.ok(
      portabilityProblems(bad).some((p) => why.test(p)),
      `${bad} is reported`,
    )
  }
})

t.test('the rules JSON Schema can say are in the request schemas', async (t) => {
  const cases: ReadonlyArray<readonly [string, unknown, boolean, string]> = [
    ['CallUserRequest', { user_name: 'alice', destination: 'bob' }, true, 'one identifier'],
    ['CallUserRequest', { destination: 'bob' }, false, 'no user identifier'],
    ['CallUserRequest', { user_did: '0501231001', destination: 'bob' }, true, 'any identifier will do'],
    ['CallGroupRequest', { destination: 'bob', calling_name: 'x' }, false, 'no group identifier'],
    ['InitiateCallRequest', { pstn_number: '0311112222', destination: 'bob' }, true, 'pstn_number instead of user_name'],
    ['InitiateCallRequest', { destination: 'bob' }, false, 'neither user_name nor pstn_number'],
    ['CallExternalRequest', { target: { called_number: '0311112222', end_user: {} }, destination: 'bob' }, false, 'an empty end_user'],
    ['CallExternalRequest', { target: { called_number: '0311112222', end_user: { name: 'Jane' } }, destination: 'bob' }, true, 'an end_user with a field'],
    ['CallExternalRequest', { target: 'alice', destination: 'bob' }, false, 'a target that is not a PSTN number'],
    ['CallExternalRequest', { target: '{name=Jane%20Doe,organization=ACME}0311112222', destination: 'bob' }, true, 'a target after an end_user prefix'],
    ['CallExternalRequest', { target: '{name=}0311112222', destination: 'bob' }, false, 'an empty prefix value'],
    ['CallExternalRequest', { target: '{name=a,name=b}0311112222', destination: 'bob' }, false, 'a prefix key twice'],
    ['CallExternalRequest', { target: '0311112222', destination: 'xml_url:https://ivr.example/a.xml,https://ivr2.example/b.xml' }, true, 'xml_url: fallbacks'],
    ['CallExternalRequest', { target: '0311112222', destination: 'xml_url:inline_xml://PFJlc3BvbnNlLz4=' }, true, 'xml_url:inline_xml://'],
    ['CallExternalRequest', { target: '0311112222', destination: 'xml_url:ftp://ivr.example/a.xml' }, false, 'xml_url: of another scheme'],
    ['CallExternalRequest', { target: '0311112222', destination: '{name=Jane}0311112222' }, false, 'a PSTN destination in call_external'],
    ['CallUserRequest', { user_name: 'alice', destination: 'xml_url:https://ivr.example/a.xml' }, false, 'xml_url: outside call_external'],
    ['CallUserRequest', { user_name: 'alice', destination: '{name=Jane}0311112222' }, true, 'a PSTN destination with end_user'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob smith' }, false, 'a destination name with a space'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'https://cb.example.com/result?id=1' }, true, 'an https callback_url'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'http://127.0.0.1:8080/cb' }, true, 'an IPv4 callback_url'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'http://[2001:db8::1]/cb' }, true, 'an IPv6 callback_url'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'ftp://cb.example.com/x' }, false, 'a callback_url of another scheme'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'https://' }, false, 'a callback_url without a host'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'http://1.2.3.999/' }, false, 'a host the URL parser reads as a bad IPv4 address'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', callback_url: 'http://xn--a/' }, false, 'a host with bad punycode'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', answer_timeout: '00000030' }, true, 'eight digits'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', answer_timeout: '000000030' }, false, 'nine digits'],
    ['CallUserRequest', { user_name: 'alice', destination: 'bob', answer_timeout: '3601' }, false, 'over 3600'],
    ['GenWsTicketRequest', { uri: '/api/ws_cti?app_name=crm&user_name=alice' }, true, 'a ws_cti URI'],
    ['GenWsTicketRequest', { uri: 'wss://cod.example:8443/api/ws_cti?app_name=crm&full_events=true&read_only=true' }, true, 'a wss URL with full_events and read_only'],
    ['GenWsTicketRequest', { uri: '/api/ws_cti?app_name=crm&full_events=true' }, false, 'full_events without read_only'],
    ['GenWsTicketRequest', { uri: '/api/other?app_name=crm&user_name=alice' }, false, 'another path'],
    ['GenWsTicketRequest', { uri: '/api/ws_cti?app_name=crm&user_name=alice&ticket=abc' }, false, 'a ticket in the URI'],
  ]
  for (const [name, body, valid, what] of cases) {
    const problems = check.checkAt(schema(name), body)
    if (valid) t.same(problems, [], `${name} takes ${what}`)
    else t.not(problems.length, 0, `${name} refuses ${what}`)
  }
})

t.test('each operation lists the refusals only the domain can decide, with ids its responses document', async (t) => {
  const at = (o: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined), o)
  for (const [op, rules] of Object.entries(DOMAIN_RULES)) {
    const post = at(doc, 'paths', `/api/${op}`, 'post')
    const description = String(at(post, 'description'))
    for (const rule of rules) t.ok(description.includes(rule), `${op} says: ${rule.slice(0, 60)}...`)
    const documented = new Set(
      Object.values(at(post, 'responses') as Record<string, unknown>).flatMap(
        (r) => (at(r, 'content', 'application/json', 'schema', 'properties', 'error', 'properties', 'id', 'enum') as string[] | undefined) ?? [],
      ),
    )
    for (const id of rules.join(' ').match(/`[a-z_]+`/g) ?? []) {
      const bare = id.slice(1, -1)
      if (!(ALL_ERROR_IDS as string[]).includes(bare)) continue
      t.ok(documented.has(bare), `${op}: ${bare} is one of its documented replies`)
    }
  }
})

t.test('the daemon keeps the rules whose form changed for portability', async (t) => {
  // The 8-digit bound of a timeout string was a lookahead; it is now the string's max.
  t.equal(timeoutSchema.safeParse('00000030').data, 30, 'eight digits are taken')
  t.equal(timeoutSchema.safeParse('000000030').error?.issues[0]?.message, 'must be a whole number of seconds from 1 to 3600', 'nine digits are refused')
  // Strict text is now two checks (no control character; well-formed Unicode): each still names the first offence.
  t.match(strictString().safeParse('a\ud800b\u0001').error?.issues[0]?.message, /lone surrogate U\+D800 at position 2/)
  t.match(strictString().safeParse('a\u0001b\ud800').error?.issues[0]?.message, /control characters \(found U\+0001 at position 2\)/)
  t.equal(strictString().safeParse('Jane 山田 😀').success, true, 'pairs and non-ASCII text are taken')
})
