/**
 * The page's static router (src/ui/router.ts) on a real HTTP server: only the page's own files,
 * each with the security headers; `/ui` redirects to `/ui/`; the API prefix written into the
 * page; conditional requests; a folder without the files is refused at start.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import Koa from 'koa'
import t, { type Test } from 'tap'
import { uiRouter } from '../../src/ui/router.js'
import { ASSET_TYPES, loadAssets } from '../../src/ui/assets.js'
import { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from '../../src/ui/headers.js'

async function serve(t: Test, apiPrefix: string): Promise<string> {
  const router = uiRouter({ apiPrefix })
  if (!router.ok) throw new Error(router.error)
  const app = new Koa()
  app.use(router.value.routes())
  const server: Server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('the page files, each with the security headers', async (t) => {
  const base = await serve(t, '/api')
  const paths = ['/ui/', ...Object.keys(ASSET_TYPES).map((n) => `/ui/${n}`)]
  for (const path of paths) {
    const res = await fetch(`${base}${path}`)
    t.equal(res.status, 200, path)
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) t.equal(res.headers.get(name), value, `${path}: ${name}`)
    const name = path === '/ui/' ? 'index.html' : path.slice(4)
    t.equal(res.headers.get('content-type'), ASSET_TYPES[name], `${path}: its type`)
    const head = await fetch(`${base}${path}`, { method: 'HEAD' })
    t.equal(head.status, 200, `HEAD ${path}`)
  }
  const csp = CONTENT_SECURITY_POLICY
  for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"]) {
    t.ok(csp.split('; ').includes(directive), `CSP has ${directive}`)
  }
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'nothing unsafe, no wildcard')
})

t.test('/ui redirects to /ui/ (the page\'s relative URLs need the slash)', async (t) => {
  const base = await serve(t, '/api')
  const res = await fetch(`${base}/ui`, { redirect: 'manual' })
  t.equal(res.status, 308)
  t.equal(res.headers.get('location'), '/ui/')
  t.equal(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY)
})

t.test('nothing else is served', async (t) => {
  const base = await serve(t, '/api')
  for (const path of ['/ui/nope.js', '/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/static/app.js', '/ui/app.js/', '/ui/index.html.bak', '/ui//app.js', '/ui/assets.ts']) {
    const res = await fetch(`${base}${path}`)
    t.equal(res.status, 404, path)
    await res.arrayBuffer()
  }
  const post = await fetch(`${base}/ui/`, { method: 'POST', body: 'x' })
  t.not(post.status, 200, 'POST is not a way in')
})

t.test('the API prefix is written into the page, escaped', async (t) => {
  const base = await serve(t, '/cod/v1')
  const html = await (await fetch(`${base}/ui/`)).text()
  t.match(html, '<meta name="cod-api-prefix" content="/cod/v1">')
  t.notMatch(html, '{{API_PREFIX}}')
  // http.prefix is validated (/^(\/[A-Za-z0-9._-]+)*$/); the page escapes it all the same.
  const odd = loadAssets('/x"><script>')
  t.ok(odd.ok)
  if (odd.ok) t.match(odd.value.get('index.html')?.body.toString('utf8') ?? '', 'content="/x&quot;&gt;&lt;script&gt;"')
  const empty = await serve(t, '')
  t.match(await (await fetch(`${empty}/ui/`)).text(), '<meta name="cod-api-prefix" content="">', 'an empty prefix')
})

t.test('conditional requests', async (t) => {
  const base = await serve(t, '/api')
  const first = await fetch(`${base}/ui/app.js`)
  const etag = first.headers.get('etag')
  t.match(etag, /^"[A-Za-z0-9_-]{27}"$/)
  const again = await fetch(`${base}/ui/app.js`, { headers: { 'if-none-match': etag ?? '' } })
  t.equal(again.status, 304)
  t.equal(again.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY)
  const other = await fetch(`${base}/ui/app.js`, { headers: { 'if-none-match': '"stale"' } })
  t.equal(other.status, 200)
})

t.test('a folder without the page files is refused at start, naming the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cod-ui-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'index.html'), '<!doctype html>')
  const r = uiRouter({ apiPrefix: '/api', staticDir: pathToFileURL(`${dir}/`) })
  t.match(r, { ok: false, error: /cannot read the page file .*style\.css \(ENOENT\); npm run build copies src\/ui\/static\// })
})
