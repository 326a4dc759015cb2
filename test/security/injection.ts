/**
 * The injection corpus of test/abuse/corpus.ts, reused rather than copied:
 *
 * - its refused API corpus (hostile values in every strict field of the four operations,
 *   malformed JSON, bad UTF-8, wrong content types, methods and paths, another tenant's names),
 *   re-aimed at this world's domains (its abuse.test / other.test credentials become alpha's and
 *   beta's, whose records carry the same names); every third case, and every case of the kinds
 *   that appear once (malformed bodies, cross-tenant), with wrong-credential cases sent from an
 *   attacker address (each is a failed authentication);
 * - its INJECTIONS and UNICODE in the string fields the abuse suite does not reach: the
 *   gen_ws_ticket `uri` and every ws_cti query parameter.
 */
import { DOMAIN, INJECTIONS, OTHER_DOMAIN, OTHER_TOKEN, TOKEN, UNICODE, basic as abuseBasic, refusedCorpus } from '../abuse/corpus.js'
import { AUTH_ALPHA, AUTH_BETA, apiPost, outcomeOf, pool, type World } from './world.js'

const UPGRADE = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'MDEyMzQ1Njc4OWFiY2RlZg==' }

/** Kinds of the abuse corpus kept whole (few cases each); the rest is sampled. */
const WHOLE = /^(malformed|not UTF-8|body too large|content type|method|path|cross-domain|other tenant|auth:)/

export async function apiCorpus(w: World, attacker: string): Promise<string[]> {
  const problems: string[] = []
  const own = abuseBasic(DOMAIN, TOKEN)
  const other = abuseBasic(OTHER_DOMAIN, OTHER_TOKEN)
  const corpus = refusedCorpus().filter((r, i) => WHOLE.test(r.name) || i % 3 === 0)
  const answers = await pool(corpus, 8, async (r) => {
    const auth = r.headers.authorization
    const headers = { ...r.headers }
    let from: string | undefined
    if (auth === own) headers.authorization = AUTH_ALPHA
    else if (auth === other) headers.authorization = AUTH_BETA
    else from = attacker
    const a = await w.send({ method: r.method, path: r.path, headers, ...(r.body !== undefined ? { body: r.body } : {}) }, from !== undefined ? { from } : {})
    return { r, a, wrongCredentials: from !== undefined }
  })
  for (const { r, a, wrongCredentials } of answers) {
    w.tally.count('injection: API corpus (test/abuse)', outcomeOf(a))
    // A wrong credential: 401, or 429 once the attacker address is blocked.
    const expected = wrongCredentials ? [401, 429] : r.status !== undefined ? [r.status] : undefined
    if (a.status < 400 || a.status >= 500) problems.push(`${r.name}: ${a.status} ${a.text.slice(0, 140)}`)
    else if (expected !== undefined && !expected.includes(a.status) && !(r.method === 'HEAD' && a.status === 405)) problems.push(`${r.name}: ${a.status}, expected ${expected.join('/')}`)
  }
  return problems
}

/** Percent-encoding that also sends a lone surrogate, as its WTF-8 bytes (what encodeURIComponent refuses to). */
function pct(v: string): string {
  try {
    return encodeURIComponent(v)
  } catch {
    return [...v]
      .map((ch) => {
        const c = ch.charCodeAt(0)
        if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff) return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
        return encodeURIComponent(ch)
      })
      .join('')
  }
}

export async function ctiStrings(w: World): Promise<string[]> {
  const problems: string[] = []
  const values = [...INJECTIONS, ...UNICODE]
  const base = '/api/ws_cti'
  // gen_ws_ticket: the uri's parameters and the uri itself.
  const uris = values.flatMap((v) => {
    const e = pct(v)
    return [`${base}?app_name=crm${e}&user_name=alice`, `${base}?app_name=crm&user_name=alice${e}`, `${base}?app_name=crm&user_name=alice&read_only=true${e}`, `${base}${v}?app_name=crm&user_name=alice`]
  })
  const tickets = await pool(uris, 8, async (uri) => ({ uri, a: await w.send(apiPost('gen_ws_ticket', { uri })) }))
  for (const { uri, a } of tickets) {
    w.tally.count('injection: gen_ws_ticket uri', outcomeOf(a))
    // A value that stays valid after decoding (e.g. a look-alike letter in user_name) is not found; none may pass.
    if (a.status < 400 || a.status >= 500) problems.push(`gen_ws_ticket ${JSON.stringify(uri).slice(0, 100)}: ${a.status} ${a.text.slice(0, 120)}`)
  }
  // ws_cti query parameters, with alpha's token.
  const fields = ['app_name', 'user_name', 'user_id', 'user_label', 'user_extension', 'user_did', 'user_email', 'full_events', 'read_only', 'forced']
  const valid: Record<string, string> = { app_name: 'crm', user_name: 'alice', user_id: 'a1', user_label: 'Alice', user_extension: '1001', user_did: '0501231001', user_email: 'alice@alpha.test', full_events: 'false', read_only: 'false', forced: 'false' }
  const queries = values.flatMap((v) =>
    fields.map((f) => {
      const q: Record<string, string> = { app_name: pct('crm'), ...(f.startsWith('user_') || f === 'app_name' ? {} : { user_name: 'alice' }) }
      if (f === 'app_name') q.user_name = 'alice'
      q[f] = pct(`${valid[f] ?? ''}${v}`)
      return `${base}?${Object.entries(q)
        .map(([k, x]) => `${k}=${x}`)
        .join('&')}`
    }),
  )
  const upgrades = await pool(queries, 8, async (path) => ({ path, a: await w.send({ method: 'GET', path, headers: { authorization: AUTH_ALPHA, ...UPGRADE } }) }))
  for (const { path, a } of upgrades) {
    w.tally.count('injection: ws_cti query', outcomeOf(a))
    if (a.status < 400 || a.status >= 500) problems.push(`ws_cti ${path.slice(0, 120)}: ${a.status} ${a.text.slice(0, 120)}`)
  }
  return problems
}

/**
 * Strict text (issue 12's table: lone surrogates and control characters in `end_user.name`,
 * `calling_name`): every free-text field of the operations, in the object and the `{...}`
 * prefix forms, with each character that is not text: `400 invalid_parameter`, never replaced.
 */
export async function strictText(w: World): Promise<string[]> {
  const problems: string[] = []
  const bad = ['\u0000', '\u0001', '\u0008', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009b', '\ud800', '\udbff', '\udc00', '\udfff']
  const endUser = (v: string) => ({ called_number: '0311112222', calling_number: '0501230000', end_user: { name: `Jane${v}` } })
  const bodies: Array<(v: string) => [string, Record<string, unknown>]> = [
    (v) => ['call_user', { user_name: 'carol', destination: '0311112222', calling_name: `Sec${v}` }],
    (v) => ['call_user', { user_name: 'carol', destination: endUser(v) }],
    (v) => ['call_user', { user_name: 'carol', destination: { ...endUser(''), end_user: { organization: `ACME${v}` } } }],
    (v) => ['call_user', { user_name: 'carol', destination: { ...endUser(''), end_user: { id: `c-1${v}` } } }],
    (v) => ['call_user', { user_name: 'carol', destination: { ...endUser(''), end_user: { prefecture: `Tokyo${v}` } } }],
    (v) => ['call_user', { user_name: 'carol', destination: { ...endUser(''), end_user: { avatar: `https://a.example/j${v}.png` } } }],
    (v) => ['call_user', { user_name: 'carol', destination: `{name=${pct(`Jane${v}`)}}0311112222` }],
    (v) => ['call_group', { group_name: 'sales', destination: '0311112222', calling_name: `Sec${v}` }],
    (v) => ['call_external', { target: endUser(v), destination: 'carol' }],
    (v) => ['call_external', { target: `{organization=${pct(`ACME${v}`)}}0311112222`, destination: 'carol' }],
  ]
  const cases = bad.flatMap((v) =>
    bodies.map((b) => {
      const [op, body] = b(v)
      return { op, body }
    }),
  )
  const answers = await pool(cases, 8, async (c) => ({ c, a: await w.send(apiPost(c.op, c.body)) }))
  for (const { c, a } of answers) {
    w.tally.count('strict text (free-text fields)', outcomeOf(a))
    if (a.errorId !== 'invalid_parameter') problems.push(`${c.op} ${JSON.stringify(c.body).slice(0, 100)}: ${a.status} ${a.text.slice(0, 140)}`)
  }
  return problems
}
