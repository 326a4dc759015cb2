/**
 * The generated corpus of hostile API requests (docs/bench.md lists its families).
 *
 * Two kinds:
 * - `refused`: every request must be refused (a well-formed error of docs/design.md "Error ids and
 *   statuses", never 2xx or 5xx) and none may make the daemon originate anything: hostile values in
 *   every field whose rules leave no room for them, wrong types, huge strings, unicode tricks,
 *   malformed and deeply nested JSON, wrong tokens and content types (with otherwise valid bodies:
 *   a daemon that let them through would originate), wrong methods and paths, another tenant's
 *   names.
 * - `freeText`: hostile values in the few fields that are free text (calling_name, callback_url,
 *   end_user, xml_url) of otherwise valid requests: these may be accepted, and then the ESL
 *   commands that follow must not carry the hostile text (checked by the test).
 */
import { createHash } from 'node:crypto'

export const DOMAIN = 'abuse.test'
export const TOKEN = 'abuse-token-0123456789'
export const OTHER_DOMAIN = 'other.test'
export const OTHER_TOKEN = 'other-token-0123456789'
const BODY_LIMIT = 65536
/** Nothing listens there (discard port): callbacks of accepted requests fail once and are dropped. */
const CB = 'http://127.0.0.1:9/cb'

export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const AUTH = basic(DOMAIN, TOKEN)
const JSON_TYPE = 'application/json'

export interface AbuseRequest {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Buffer
  /** The status the case decides, when it decides one (else any well-formed error). */
  readonly status?: number
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Obj = { [k: string]: Json }

/** Texts that mean something to ESL, dial strings, FreeSWITCH's expander, XML or a shell. */
export const INJECTIONS: readonly string[] = [
  '\n\napi system id',
  '\r\nbgapi originate sofia/gateway/x/1 &park()',
  '\nsendmsg\ncall-command: hangup',
  ',sofia/gateway/x/1',
  '|sofia/gateway/x/1',
  ':_:sofia/gateway/x/1',
  '{a=b}',
  '[a=b]',
  '<a=b>',
  '^^:a=b:c=d',
  "'",
  "' origination_nested_vars=true '",
  '"',
  '\\',
  '\\s',
  '${system(id)}',
  '$${hostname}',
  '${api(system id)}',
  ']]>',
  '<x>',
  '<!ENTITY x SYSTEM "file:///etc/passwd">',
  '&amp;',
  '&#36;',
  ' ',
  '%0a',
  '%00',
  '`id`',
  '$(id)',
  '; rm -rf /',
  '../../etc/passwd',
]

/** Unicode that looks harmless or invisible, or is not text at all. */
export const UNICODE: readonly string[] = [
  '\u202e', // RIGHT-TO-LEFT OVERRIDE
  '\u200b', // ZERO WIDTH SPACE
  '\u200d', // ZERO WIDTH JOINER
  '\ufeff', // BOM
  '\u0000', // NUL
  '\u0085', // NEL (C1)
  '\u2028', // LINE SEPARATOR
  '\ud800', // lone high surrogate
  '\udc00', // lone low surrogate
  '\u0430', // CYRILLIC SMALL LETTER A (homoglyph of a)
  '\uff41', // FULLWIDTH a
  '\u0130', // I WITH DOT ABOVE (lower-cases to two code points)
  'e\u0301', // combining accent
  '\uff10\uff13', // fullwidth digits
  '\u0660\u0663', // Arabic-Indic digits
]

/**
 * Substrings that must never appear in any ESL command line: what gives meaning to FreeSWITCH's
 * parsers (variables, brackets, delimiters, quotes, expansions). Words such as "system" may
 * survive as harmless text in a neutralised caller name or a percent-encoded end_user.
 */
export const MARKERS: readonly string[] = [
  '$',
  '`',
  '\\',
  '"',
  '{a=b}',
  '[a=b]',
  '<a=b>',
  '<x>',
  '<!',
  '^^',
  ':_:',
  ']]>',
  '&amp;',
  'nested_vars=',
  ',sofia/gateway/x',
  '|',
  '\n',
  '\r',
]

/** Otherwise valid requests; each is also sent once by the test to show the mutations are what fails. */
export const BASES = {
  call_user: {
    user_name: 'alice',
    destination: { called_number: '0311112222', calling_number: '0501230000', end_user: { name: 'Jane', avatar: 'https://a.example/j.png' } },
    answer_timeout: 30,
    auto_answer: false,
    calling_name: 'Abuse',
    group_name: 'sales',
    callback_url: CB,
  },
  call_group: {
    group_name: 'sales',
    destination: { called_number: '0311112222', calling_number: '0501230000', end_user: { name: 'Jane', avatar: 'https://a.example/j.png' } },
    answer_timeout: 30,
    member_answer_timeout: 10,
    calling_name: 'Abuse',
    callback_url: CB,
  },
  call_external: {
    target: { called_number: '0311112222', calling_number: '0501230000', end_user: { name: 'Jane', avatar: 'https://a.example/j.png' } },
    destination: 'alice',
    answer_timeout: 30,
    callback_url: CB,
  },
  initiate_call: { user_name: 'alice', destination: '0311112222', ani: '0501230000', group_name: 'sales' },
} satisfies Record<string, Obj>
const BASE_OF: Readonly<Record<string, Obj>> = BASES

/** Fields whose rules leave no room for hostile text, with a valid value each. */
const STRICT: Readonly<Record<string, ReadonlyArray<[string, string]>>> = {
  call_user: [
    ['user_id', 'a1'],
    ['user_name', 'alice'],
    ['user_label', 'Alice'],
    ['user_extension', '1001'],
    ['user_did', '0501231001'],
    ['user_email', 'alice@abuse.test'],
    ['destination', 'bob'],
    ['destination.called_number', '0311112222'],
    ['destination.calling_number', '0501230000'],
    ['answer_timeout', '30'],
    ['auto_answer', 'false'],
    ['group_id', 'g10'],
    ['group_name', 'sales'],
    ['group_label', 'Sales'],
    ['group_extension', '2001'],
    ['group_did', '0501232001'],
    ['group_resolver', '*'],
  ],
  call_group: [
    ['group_id', 'g10'],
    ['group_name', 'sales'],
    ['group_label', 'Sales'],
    ['group_extension', '2001'],
    ['group_did', '0501232001'],
    ['destination', '0311112222'],
    ['destination.called_number', '0311112222'],
    ['answer_timeout', '30'],
    ['member_answer_timeout', '10'],
  ],
  call_external: [
    ['target', '0311112222'],
    ['target.called_number', '0311112222'],
    ['target.calling_number', '0501230000'],
    ['destination', 'alice'],
    ['answer_timeout', '30'],
  ],
  initiate_call: [
    ['user_name', 'alice'],
    ['pstn_number', '0311112222'],
    ['destination', '0311112222'],
    ['ani', '0501230000'],
    ['group_name', 'sales'],
  ],
}

/** Free-text fields (may be accepted with hostile text), per operation. */
const FREE: Readonly<Record<string, readonly string[]>> = {
  call_user: ['calling_name', 'callback_url', 'destination.end_user.name', 'destination.end_user.avatar'],
  call_group: ['calling_name', 'callback_url', 'destination.end_user.organization'],
  call_external: ['callback_url', 'target.end_user.name', 'target.end_user.prefecture', 'target.end_user.id'],
}

/** Values of the wrong type (or shape) for any field. Booleans are right for auto_answer. */
const WRONG_TYPES: readonly Json[] = [0, -1, 1.5, 1e300, true, false, null, [], ['alice'], {}, { $ne: null }, '', '   ']

const clone = (o: Obj): Obj => JSON.parse(JSON.stringify(o)) as Obj

/** Sets `a.b.c` in a copy of `base`, creating objects on the way (a string on the way is replaced). */
function setPath(base: Obj, path: string, value: Json): Obj {
  const out = clone(base)
  const keys = path.split('.')
  let node: Obj = out
  for (const k of keys.slice(0, -1)) {
    const next = node[k]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[k] = {}
    node = node[k] as Obj
  }
  node[keys.at(-1) ?? ''] = value
  return out
}

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8')
const post = (name: string, op: string, body: Buffer | undefined, headers: Record<string, string> = {}, status?: number): AbuseRequest => ({
  name,
  method: 'POST',
  path: `/api/${op}`,
  headers: { authorization: AUTH, 'content-type': JSON_TYPE, ...headers },
  ...(body !== undefined ? { body } : {}),
  ...(status !== undefined ? { status } : {}),
})

export function refusedCorpus(): AbuseRequest[] {
  const out: AbuseRequest[] = []
  for (const [op, fields] of Object.entries(STRICT)) {
    const base = BASE_OF[op] ?? {}
    for (const [path, valid] of fields) {
      const values: Json[] = []
      for (const inj of INJECTIONS) values.push(valid + inj)
      for (const inj of INJECTIONS.slice(0, 8)) values.push(inj + valid)
      for (const u of UNICODE) values.push(valid.slice(0, 1) + u + valid.slice(1))
      values.push(...UNICODE.slice(0, 5).map((u) => valid + u), ...UNICODE.slice(9, 12).map((u) => u + valid.slice(1)))
      for (const w of WRONG_TYPES) if (!(path === 'auto_answer' && typeof w === 'boolean')) values.push(w)
      // Four times a valid value is too long for every kind (a number of 40 digits, a name of 20+ characters...).
      values.push('x'.repeat(5000), valid.repeat(4))
      for (const v of values) out.push(post(`${op} ${path}=${JSON.stringify(v).slice(0, 60)}`, op, json(setPath(base, path, v))))
      out.push(post(`${op} ${path} too large`, op, json(setPath(base, path, valid + 'x'.repeat(BODY_LIMIT))), {}, 413))
    }
    // Unknown and prototype-polluting parameters (a typo must not pass silently).
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'user_Name', 'destination ', 'calling_number', 'x']) {
      out.push(post(`${op} unknown ${key}`, op, Buffer.from(`{${JSON.stringify(key)}:{"user_name":"alice"},${JSON.stringify(base).slice(1)}`), {}, 400))
    }
    out.push(post(`${op} 1000 keys`, op, json({ ...base, ...Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])) }), {}, 400))
  }

  // Bodies that are not JSON objects, or not JSON.
  const valid = JSON.stringify(BASES.call_user)
  const noDestination = JSON.stringify({ user_name: 'alice' })
  const malformed = [
    '{',
    '}',
    '{"user_name":',
    "{'user_name':'alice'}",
    '[]',
    `[${valid}]`,
    '"alice"',
    '1',
    'null',
    'true',
    '',
    ' ',
    `${valid}garbage`,
    `${valid.slice(0, -1)},}`,
    'NaN',
    '{"user_name":NaN}',
    `${valid.slice(0, -1)},"answer_timeout":1e999}`,
    `\ufeff${noDestination}`,
    '{"user_name":"alice","user_name":"bob"}',
    `${valid.slice(0, -1)},"answer_timeout":30,"answer_timeout":"x"}`,
    '{"destination":' + '['.repeat(20000) + ']'.repeat(20000) + '}',
    '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    '{"user_name":"alice","destination":' + '{"called_number":'.repeat(3000) + '"1"' + '}'.repeat(3000) + '}',
    `{"user_name":"alice","destination":"${'\\u0000'.repeat(100)}"}`,
    `{"user_name":"\\ud800\\udc00lice","destination":"0311112222"}`,
  ]
  for (const m of malformed) out.push(post(`malformed ${JSON.stringify(m).slice(0, 60)}`, 'call_user', Buffer.from(m, 'utf8')))
  // Raw bytes that are not UTF-8: overlong encodings, an encoded surrogate, invalid bytes.
  const raw = (bytes: number[]) => Buffer.concat([Buffer.from('{"user_name":"'), Buffer.from(bytes), Buffer.from('lice","destination":"0311112222"}')])
  for (const bytes of [[0xc1, 0xa1], [0xe0, 0x81, 0xa1], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x61, 0x00]]) {
    out.push(post(`not UTF-8 ${bytes.map((b) => b.toString(16)).join(' ')}`, 'call_user', raw(bytes)))
  }
  out.push(post('body too large', 'call_user', Buffer.from(JSON.stringify({ ...BASES.call_user, pad: 'x'.repeat(BODY_LIMIT) })), {}, 413))

  // Credentials: every case with a valid body (a daemon that let one through would originate).
  const sha = `sha256:${createHash('sha256').update(TOKEN).digest('hex')}`
  const wrongAuth: Array<[string, string | undefined]> = [
    ['none', undefined],
    ['empty', ''],
    ['Basic only', 'Basic'],
    ['Basic empty', 'Basic '],
    ['no password', basic(DOMAIN, '')],
    ['no colon', `Basic ${Buffer.from(DOMAIN).toString('base64')}`],
    ['wrong token', basic(DOMAIN, 'wrong-token-0123456789')],
    ['token prefix', basic(DOMAIN, TOKEN.slice(0, -1))],
    ['token plus', basic(DOMAIN, `${TOKEN}x`)],
    ['token with space', basic(DOMAIN, `${TOKEN} `)],
    ['domain with space', basic(` ${DOMAIN}`, TOKEN)],
    ['the token’s digest', basic(DOMAIN, sha)],
    ['other domain’s token', basic(DOMAIN, OTHER_TOKEN)],
    ['this token, other domain', basic(OTHER_DOMAIN, TOKEN)],
    ['unknown domain', basic('nowhere.test', TOKEN)],
    ['Bearer', `Bearer ${TOKEN}`],
    ['not base64', 'Basic !!!!'],
    ['binary', `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}`],
    ['huge', basic(DOMAIN, 'x'.repeat(8000))],
    ['two schemes', `${AUTH}, Basic ${Buffer.from('x:y').toString('base64')}`],
    ['injection in the domain', basic(`${DOMAIN}\n\napi system id`, TOKEN)],
  ]
  for (const [name, value] of wrongAuth) {
    const headers: Record<string, string> = { 'content-type': JSON_TYPE }
    if (value !== undefined) headers.authorization = value
    out.push({ name: `auth: ${name}`, method: 'POST', path: '/api/call_user', headers, body: json(BASES.call_user), status: 401 })
  }

  // Content types other than application/json (valid body and credentials).
  for (const type of [
    undefined,
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json-patch+json',
    'application/vnd.api+json',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/jsonx',
    'text/json',
    'application/xml',
    'application/json, text/plain',
  ]) {
    const headers: Record<string, string> = { authorization: AUTH }
    if (type !== undefined) headers['content-type'] = type
    out.push({ name: `content type ${type ?? '(none)'}`, method: 'POST', path: '/api/call_user', headers, body: json(BASES.call_user), status: 415 })
  }

  // Methods and paths (body {} so that a path that does route is still refused).
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
    out.push({ name: `method ${method}`, method, path: '/api/call_user', headers: { authorization: AUTH, 'content-type': JSON_TYPE }, body: json(BASES.call_user), status: 405 })
  }
  for (const path of [
    '/api/call_user/',
    '/api/CALL_USER',
    '/api//call_user',
    '/api/call_user%00',
    '/api/call_user;x=1',
    '/api/call_user?x=1',
    '/api/%2e%2e/api/call_user',
    '/api/../api/call_user',
    '/api/call_user%2f',
    '/api/call_user%C3%A9',
    '/api/',
    '/api',
    '/',
    '/api/call_users',
    '/api/call_user.json',
    '/API/call_user',
    '//api/call_user',
    '/healthz/../api/call_user',
    `/api/${'a'.repeat(8000)}`,
    '/api/%ff%fe',
  ]) {
    out.push({ name: `path ${path.slice(0, 60)}`, method: 'POST', path, headers: { authorization: AUTH, 'content-type': JSON_TYPE }, body: json({}) })
  }

  // Another tenant's identifiers with this tenant's token, and the reverse.
  const cross: Array<[string, Obj]> = [
    ['call_user', { ...BASES.call_user, user_name: 'oscar' }],
    ['call_user', { ...omit(BASES.call_user, 'user_name'), user_id: 'o9' }],
    ['call_user', { ...omit(BASES.call_user, 'user_name'), user_extension: '7009' }],
    ['call_user', { ...omit(BASES.call_user, 'user_name'), user_did: '0607777009' }],
    ['call_user', { ...omit(BASES.call_user, 'user_name'), user_email: 'oscar@other.test' }],
    ['call_user', { ...omit(BASES.call_user, 'user_name'), user_label: 'Oscar' }],
    ['call_user', { ...BASES.call_user, group_name: 'ops' }],
    ['call_user', { ...omit(BASES.call_user, 'group_name'), group_id: 'g90' }],
    ['call_user', { ...omit(BASES.call_user, 'group_name'), group_extension: '7090' }],
    ['call_user', { ...BASES.call_user, destination: 'oscar' }],
    ['call_user', { ...BASES.call_user, destination: 'ops' }],
    ['call_user', { ...BASES.call_user, destination: { called_number: '0311112222', calling_number: '0607770000' } }],
    ['call_group', { ...BASES.call_group, group_name: 'ops' }],
    ['call_group', { ...omit(BASES.call_group, 'group_name'), group_did: '0607777090' }],
    ['call_group', { ...omit(BASES.call_group, 'group_name'), group_label: 'Ops' }],
    ['call_external', { ...BASES.call_external, destination: 'oscar' }],
    ['call_external', { ...BASES.call_external, destination: '7009' }],
    ['call_external', { ...BASES.call_external, destination: '7300' }],
    ['call_external', { ...BASES.call_external, target: { called_number: '0311112222', calling_number: '0607770000' } }],
    ['initiate_call', { ...BASES.initiate_call, user_name: 'oscar' }],
    ['initiate_call', { ...BASES.initiate_call, ani: '0607770000' }],
    ['initiate_call', { ...BASES.initiate_call, group_name: 'ops' }],
  ]
  for (const [op, body] of cross) out.push(post(`cross-domain ${op} ${JSON.stringify(body).slice(0, 80)}`, op, json(body)))
  for (const op of ['call_user', 'initiate_call']) {
    out.push(post(`other tenant calling ${op} alice`, op, json(BASE_OF[op] ?? {}), { authorization: basic(OTHER_DOMAIN, OTHER_TOKEN) }))
  }
  out.push(post('other tenant call_group sales', 'call_group', json(BASES.call_group), { authorization: basic(OTHER_DOMAIN, OTHER_TOKEN) }))
  out.push(post('other tenant call_external to alice', 'call_external', json(BASES.call_external), { authorization: basic(OTHER_DOMAIN, OTHER_TOKEN) }))
  return out
}

function omit(o: Obj, key: string): Obj {
  const { [key]: _dropped, ...rest } = o
  return rest
}

export function freeTextCorpus(): AbuseRequest[] {
  const out: AbuseRequest[] = []
  const values = [...INJECTIONS, ...UNICODE.slice(0, 4), 'x'.repeat(300)]
  for (const [op, paths] of Object.entries(FREE)) {
    const base = BASE_OF[op] ?? {}
    for (const path of paths) {
      for (const v of values) {
        const valid = path === 'callback_url' ? CB : path.endsWith('avatar') ? 'https://a.example/j.png' : 'Jane'
        out.push(post(`${op} ${path}=${JSON.stringify(v).slice(0, 40)}`, op, json(setPath(base, path, valid + v))))
      }
    }
  }
  // end_user in the prefix form (percent-encoded, so , } = may be sent) and xml_url targets.
  for (const v of values) {
    const dest = `{name=${encodeURIComponent(`Jane${v}`)},organization=${encodeURIComponent(v)}}0311112222`
    out.push(post(`call_user prefix ${JSON.stringify(v).slice(0, 40)}`, 'call_user', json({ ...BASES.call_user, destination: dest })))
    out.push(post(`call_external xml_url ${JSON.stringify(v).slice(0, 40)}`, 'call_external', json({ ...BASES.call_external, destination: `xml_url:https://ivr.example/x?q=${v}` })))
  }
  return out
}
