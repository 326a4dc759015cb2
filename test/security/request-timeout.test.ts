/**
 * The rule of `http.request_timeout_ms` (src/config/schema.ts; README configuration table): a
 * whole number of milliseconds from 1000 to 300000, 30000 by default. What it does to slow
 * clients is checked from outside by hostile.test.ts (bodies.ts `slowloris`).
 */
import t from 'tap'
import { daemonSchema } from '../../src/config/schema.js'

const minimal = { freeswitch: { mode: 'simulator' }, xml_curl: { username: 'freeswitch', password: 'xml-curl-secret' } }
const parse = (http: Record<string, unknown>) => daemonSchema.safeParse({ ...minimal, http })

t.test('http.request_timeout_ms', async (t) => {
  const d = parse({})
  t.equal(d.success && d.data.http.request_timeout_ms, 30000, 'default 30 s')
  for (const good of [1000, 2500, 300000]) t.ok(parse({ request_timeout_ms: good }).success, `${good} accepted`)
  for (const bad of [0, 999, 300001, 1500.5, -1, '30000', null, true]) {
    const r = parse({ request_timeout_ms: bad })
    t.notOk(r.success, `${JSON.stringify(bad)} refused`)
    if (!r.success) t.same(r.error.issues[0]?.path, ['http', 'request_timeout_ms'], `${JSON.stringify(bad)}: the key is named`)
  }
})
