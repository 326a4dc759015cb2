/**
 * The API listener's other routes (the live calls page /ui/, /metrics, the OpenAPI document,
 * /healthz) with path tricks, methods and credentials they do not expect: never a file from
 * outside what they serve (no /etc/passwd, no configuration, no source), never a 5xx, and a
 * secret never appears (hostile.test.ts checks every answer for them).
 */
import { AUTH_ALPHA, outcomeOf, type World } from './world.js'

const TRAVERSALS = [
  '/ui/../../../../etc/passwd',
  '/ui/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/ui/..%2f..%2f..%2fetc%2fpasswd',
  '/ui/%252e%252e/%252e%252e/etc/passwd',
  '/ui/..\\..\\..\\etc\\passwd',
  '/ui/app.js%00.html',
  '/ui/./app.js/../../package.json',
  '/ui//etc/passwd',
  '/ui/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd',
  '/ui/index.html?../../etc/passwd',
  '/ui/../conf/daemon.yaml',
  '/ui/../../conf/domains/example.test.yaml',
  '/ui/../src/daemon.ts',
  '/metrics/../api/openapi.json',
  '/metrics?name[]=x&%00',
  '/api/openapi.json/../../etc/passwd',
  '/api/openapi.json%00',
  '/healthz/../../etc/passwd',
  '/healthz%2f..%2f..%2fetc%2fpasswd',
  '/.env',
  '/.git/config',
  '/package.json',
  '/node_modules/.package-lock.json',
  '/journal/lock',
]

export async function otherRoutes(w: World): Promise<string[]> {
  const problems: string[] = []
  const requests = [
    ...TRAVERSALS.map((path) => ({ method: 'GET', path })),
    ...['/ui/', '/metrics', '/api/openapi.json', '/healthz'].flatMap((path) => [
      { method: 'POST', path, headers: { 'content-type': 'application/json', authorization: AUTH_ALPHA }, body: '{"x":1}' },
      { method: 'DELETE', path },
      { method: 'GET', path, headers: { authorization: `Basic ${'A'.repeat(6000)}` } },
      { method: 'GET', path: `${path}?${'q=1&'.repeat(2000)}` },
    ]),
  ]
  for (const r of requests) {
    const a = await w.send(r)
    w.tally.count('other routes (/ui, /metrics, openapi, healthz)', outcomeOf(a))
    if (a.status >= 500 || a.status === 0) problems.push(`${r.method} ${r.path.slice(0, 80)}: ${a.status}`)
    if (/root:x:0:0|"name": "fs-call-originator"|api_tokens|xml_curl:|\[core\]/.test(a.text)) problems.push(`${r.method} ${r.path.slice(0, 80)}: served something it must not: ${a.text.slice(0, 120)}`)
  }
  return problems
}
